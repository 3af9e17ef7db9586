//! The mapping of search answers to ranked ids, end to end through [`Mapper`].

use super::*;
use serde_json::json;

/// A mapper for mcpproxy's `retrieve_tools` answers ([`MCPPROXY_RETRIEVE_TOOLS_FILTER`]).
fn retrieve_tools() -> Mapper {
    Mapper::new(MCPPROXY_RETRIEVE_TOOLS_FILTER, IdStyle::Auto).unwrap()
}

/// A mapper for mcpproxy's REST search body ([`MCPPROXY_REST_SEARCH_FILTER`]).
fn rest_search() -> Mapper {
    Mapper::new(MCPPROXY_REST_SEARCH_FILTER, IdStyle::Auto).unwrap()
}

/// A CallToolResult carrying `payload` as JSON text in one text block.
fn as_text(payload: &Value) -> Value {
    json!({"content": [{"type": "text", "text": payload.to_string()}], "isError": false})
}

/// A CallToolResult carrying `payload` as structured content (plus a useless text block, as
/// some servers add one for older clients).
fn as_structured(payload: &Value) -> Value {
    json!({
        "content": [{"type": "text", "text": "see structured content"}],
        "structuredContent": payload,
        "isError": false
    })
}

fn full_mode() -> Value {
    json!({
        "query": "open an issue",
        "tools": [
            {"name": "github:create_issue", "description": "Create an issue",
             "inputSchema": {"type": "object", "properties": {}}, "score": 3.2,
             "server": "github", "call_with": "call_tool_write"},
            {"name": "gitlab:create_issue", "description": "Create an issue",
             "inputSchema": {"type": "object", "properties": {}}, "score": 2.9,
             "server": "gitlab", "call_with": "call_tool_write"},
            {"name": "jira:new_ticket", "description": "Open a ticket",
             "inputSchema": {"type": "object", "properties": {}}, "score": 1.0,
             "server": "jira", "call_with": "call_tool_write"}
        ],
        "total": 3,
        "usage_instructions": "TOOL SELECTION GUIDE: ..."
    })
}

fn compact_mode() -> Value {
    json!({
        "tools": [
            {"id": "github:create_issue", "score": 3.2, "sig": "title*:str", "desc": "Create an issue", "lossy": false},
            {"id": "gitlab:create_issue", "score": 2.9, "sig": "title*:str", "desc": "Create an issue", "lossy": false},
            {"id": "jira:new_ticket", "score": 1.0, "sig": "(~)", "desc": "Open a ticket", "lossy": true}
        ],
        "hint": "sig legend: ..."
    })
}

const RANKED: [&str; 3] = [
    "github:create_issue",
    "gitlab:create_issue",
    "jira:new_ticket",
];

#[test]
fn structured_and_text_content_give_identical_ids() {
    let m = retrieve_tools();
    let payload = full_mode();
    let from_text = m.map_call_result(&as_text(&payload)).unwrap();
    let from_structured = m.map_call_result(&as_structured(&payload)).unwrap();
    assert_eq!(from_text, RANKED);
    assert_eq!(from_structured, from_text);
    assert_eq!(call_result_payload(&as_text(&payload)).unwrap(), payload);
    assert_eq!(
        call_result_payload(&as_structured(&payload)).unwrap(),
        payload
    );
}

/// mcpproxy before v0.52.0 (v0.51.0 read from its source, `buildFullToolEntry`): `name` is
/// the bare tool name and `server` is separate. Mapping `.name` alone gave bare names that
/// are not corpus ids (every query failed); the whole object maps to the same ids as today.
#[test]
fn mcpproxy_before_v0_52_bare_names_with_a_server_field() {
    let m = retrieve_tools();
    let mut old = full_mode();
    for t in old["tools"].as_array_mut().unwrap() {
        let name = t["name"]
            .as_str()
            .unwrap()
            .split_once(':')
            .unwrap()
            .1
            .to_string();
        t["name"] = json!(name);
    }
    assert_eq!(old["tools"][0]["name"], "create_issue");
    assert_eq!(m.map_payload(&old).unwrap(), RANKED);
    assert_eq!(m.map_call_result(&as_text(&old)).unwrap(), RANKED);
    // what the old filter gave on such an answer: nothing usable
    let old_filter = Mapper::new(".tools[] | (.name // .id)", IdStyle::Auto).unwrap();
    assert!(old_filter.map_payload(&old).is_err());
}

#[test]
fn mcpproxy_full_and_compact_modes() {
    let m = retrieve_tools();
    assert_eq!(m.map_payload(&full_mode()).unwrap(), RANKED);
    assert_eq!(m.map_payload(&compact_mode()).unwrap(), RANKED);
    assert_eq!(
        m.map_call_result(&as_text(&compact_mode())).unwrap(),
        RANKED
    );
    // Zero matches serialise as an empty tools array (v0.51.0 and older: null).
    assert!(m.map_payload(&json!({"tools": []})).unwrap().is_empty());
    assert!(m.map_payload(&json!({"tools": null})).unwrap().is_empty());
    // but an answer without `tools` is not a list of tools
    assert!(m.map_payload(&json!({"error": "boom"})).is_err());
    assert!(m.map_payload(&json!("text")).is_err());
}

#[test]
fn mcpproxy_rest_search_envelope() {
    let body = json!({"success": true, "data": {"results": [
        {"tool": {"name": "create_issue", "server_name": "github", "description": "..."}, "score": 1.2},
        {"tool": {"name": "read_file", "server_name": "filesystem", "description": "..."}, "score": 0.7}
    ]}});
    let m = rest_search();
    assert_eq!(
        m.map_payload(&body).unwrap(),
        ["github:create_issue", "filesystem:read_file"]
    );
    // The same elements read as pairs.
    let pair = Mapper::new(MCPPROXY_REST_SEARCH_FILTER, IdStyle::Pair).unwrap();
    assert_eq!(
        pair.map_payload(&body).unwrap(),
        ["github:create_issue", "filesystem:read_file"]
    );
    // ... and the whole result object (tool nested under "tool") works too.
    let nested = Mapper::new(".data.results", IdStyle::Auto).unwrap();
    assert_eq!(
        nested.map_payload(&body).unwrap(),
        ["github:create_issue", "filesystem:read_file"]
    );
}

#[test]
fn double_underscore_split_at_first() {
    let m = Mapper::new(".[]", IdStyle::DoubleUnderscore).unwrap();
    let ids = m
        .map_payload(&json!([
            "my_server__read_file",
            "a__b__c",
            "github__create_issue"
        ]))
        .unwrap();
    assert_eq!(
        ids,
        ["my_server:read_file", "a:b__c", "github:create_issue"]
    );
    assert_eq!(
        normalize_id(&json!("my_server__read_file"), IdStyle::Auto).as_deref(),
        Some("my_server:read_file")
    );
    // The double-underscore style does not accept colon ids, nor the colon style `__`.
    assert_eq!(
        normalize_id(&json!("github:create_issue"), IdStyle::DoubleUnderscore),
        None
    );
    assert_eq!(
        normalize_id(&json!("my_server__read_file"), IdStyle::Colon),
        None
    );
    assert_eq!(
        normalize_id(&json!("__read_file"), IdStyle::DoubleUnderscore),
        None
    );
    assert_eq!(normalize_id(&json!("server__"), IdStyle::Auto), None);
}

#[test]
fn pairs_and_order_preserved() {
    let payload = json!({"hits": [
        {"server": "zeta", "name": "last_alphabetically"},
        {"server_name": "alpha", "name": "first"},
        {"server": "mid", "tool": "middle"},
        {"server": "github", "name": "github:create_issue"}
    ]});
    let m = Mapper::new(".hits[]", IdStyle::Pair).unwrap();
    assert_eq!(
        m.map_payload(&payload).unwrap(),
        [
            "zeta:last_alphabetically",
            "alpha:first",
            "mid:middle",
            "github:create_issue"
        ]
    );
    // A stream of [server, tool] arrays.
    let arrays = Mapper::new(
        ".hits[] | [.server // .server_name, .name // .tool]",
        IdStyle::Pair,
    )
    .unwrap();
    assert_eq!(
        arrays.map_payload(&payload).unwrap(),
        [
            "zeta:last_alphabetically",
            "alpha:first",
            "mid:middle",
            "github:create_issue"
        ]
    );
    // A lone pair is one element, not two; a single array of ids is a list.
    let lone = Mapper::new("[.server, .name]", IdStyle::Auto).unwrap();
    assert_eq!(
        lone.map_payload(&json!({"server": "s", "name": "t"}))
            .unwrap(),
        ["s:t"]
    );
    let list = Mapper::new(".ids", IdStyle::Auto).unwrap();
    assert_eq!(
        list.map_payload(&json!({"ids": ["b:x", "a:y"]})).unwrap(),
        ["b:x", "a:y"]
    );
    // Pair style accepts only separate fields.
    assert_eq!(normalize_id(&json!("s:t"), IdStyle::Pair), None);
    assert_eq!(normalize_id(&json!({"id": "s:t"}), IdStyle::Pair), None);
    assert_eq!(
        normalize_id(&json!({"server": "s", "name": "t"}), IdStyle::Colon),
        None
    );
}

#[test]
fn several_json_text_blocks_become_an_array() {
    let result = json!({"content": [
        {"type": "text", "text": "Found 2 tools:"},
        {"type": "text", "text": "{\"name\": \"b:second_rank\"}"},
        {"type": "text", "text": "{\"name\": \"a:third\"}"}
    ]});
    assert_eq!(
        call_result_payload(&result).unwrap(),
        json!([{"name": "b:second_rank"}, {"name": "a:third"}])
    );
    let m = Mapper::new(".[] | .name", IdStyle::Colon).unwrap();
    assert_eq!(
        m.map_call_result(&result).unwrap(),
        ["b:second_rank", "a:third"]
    );
}

#[test]
fn error_filter_that_does_not_compile_names_the_filter() {
    for bad in [
        ".tools[] | (.name",
        ".tools[] | nosuchfilter",
        ".tools[] | $nope",
        ".tools[] |",
    ] {
        let err = Mapper::new(bad, IdStyle::Auto).unwrap_err();
        assert!(
            matches!(&err, MapError::Compile { filter, .. } if filter == bad),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(msg.contains(bad), "{msg}");
    }
    let msg = Mapper::new(".tools[] | nosuchfilter", IdStyle::Auto)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("nosuchfilter/0"), "{msg}");
}

#[test]
fn error_non_json_text_content() {
    let result = json!({"content": [{"type": "text", "text": format!("tools[2]{{name}}: {}", "x".repeat(500))}]});
    let err = retrieve_tools().map_call_result(&result).unwrap_err();
    let MapError::NotJson { found } = &err else {
        panic!("{err:?}")
    };
    assert!(found.contains("tools[2]{name}"), "{found}");
    assert!(found.chars().count() < 300, "not truncated: {found}");
    let empty = call_result_payload(&json!({"content": []})).unwrap_err();
    assert!(matches!(empty, MapError::NotJson { .. }), "{empty:?}");
}

#[test]
fn error_is_error_result() {
    let result = json!({
        "content": [{"type": "text", "text": "Search failed: index not ready"}],
        "isError": true
    });
    let err = retrieve_tools().map_call_result(&result).unwrap_err();
    assert_eq!(
        err,
        MapError::ToolError {
            text: "Search failed: index not ready".to_string()
        }
    );
    assert!(err.to_string().contains("index not ready"));
}

#[test]
fn error_element_that_is_a_number() {
    let m = Mapper::new(".tools[]", IdStyle::Auto).unwrap();
    let err = m.map_payload(&json!({"tools": ["a:b", 42]})).unwrap_err();
    let MapError::BadElement { index, element, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((*index, element.as_str()), (1, "42"));
    assert!(err.to_string().contains("server:tool"), "{err}");
    // A missing field is null, also rejected rather than silently dropped.
    let err = retrieve_tools()
        .map_payload(&json!({"tools": [{"score": 1.0}]}))
        .unwrap_err();
    assert!(
        matches!(err, MapError::BadElement { index: 0, .. }),
        "{err:?}"
    );
}

#[test]
fn error_at_runtime() {
    let m = Mapper::new(".tools[]", IdStyle::Auto).unwrap();
    let err = m.map_payload(&json!({"tools": 7})).unwrap_err();
    assert!(
        matches!(&err, MapError::Runtime { filter, .. } if filter == ".tools[]"),
        "{err:?}"
    );
    let runaway = Mapper::new("repeat(\"a:b\")", IdStyle::Auto).unwrap();
    assert!(matches!(
        runaway.map_payload(&json!(null)),
        Err(MapError::Runtime { .. })
    ));
}

#[test]
fn std_definitions_available_and_mapper_reusable_across_threads() {
    let m = Mapper::new(
        "[.tools[] | select(.score > 1) | .name] | map(ascii_downcase)",
        IdStyle::Colon,
    )
    .unwrap();
    let payload = json!({"tools": [
        {"name": "GitHub:Create_Issue", "score": 2},
        {"name": "x:y", "score": 0.5}
    ]});
    let m = std::sync::Arc::new(m);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (m, p) = (m.clone(), payload.clone());
            std::thread::spawn(move || m.map_payload(&p).unwrap())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), ["github:create_issue"]);
    }
}

#[test]
fn id_style_serde_names() {
    let styles: Vec<IdStyle> =
        serde_json::from_value(json!(["auto", "colon", "double_underscore", "pair"])).unwrap();
    assert_eq!(
        styles,
        [
            IdStyle::Auto,
            IdStyle::Colon,
            IdStyle::DoubleUnderscore,
            IdStyle::Pair
        ]
    );
}

#[test]
fn fastmcp_result_envelopes_open_once() {
    let m = Mapper::new(".[]", IdStyle::Auto).unwrap();
    let ids = json!(["a:x", "b:y"]);
    // JSON inside `result` is decoded
    let wrapped = as_structured(&json!({"result": ids.to_string()}));
    assert_eq!(m.map_call_result(&wrapped).unwrap(), ["a:x", "b:y"]);
    // plain text inside `result` reaches the filter as the string it is
    let text = Mapper::new(r#"[splits("\n") | ltrimstr("- ")]"#, IdStyle::Auto).unwrap();
    let wrapped = as_structured(&json!({"result": "- a__x\n- b__y"}));
    assert_eq!(text.map_call_result(&wrapped).unwrap(), ["a:x", "b:y"]);
    // an in-band failure is a tool error quoting its message
    let failed = as_text(&json!({"success": false, "error": "index not built"}));
    match m.map_call_result(&failed) {
        Err(MapError::ToolError { text }) => assert!(text.contains("index not built")),
        other => panic!("expected a tool error, got {other:?}"),
    }
    // a second key means it is not an envelope: the object goes to the filter unchanged
    let two = as_structured(&json!({"result": "[1]", "n": 1}));
    let e = m.map_call_result(&two).unwrap_err().to_string();
    assert!(e.contains(r#"got "[1]""#), "{e}");
}

/// The preset's filter on awkward `retrieve_tools` answers: what it reads, and what it refuses.
#[test]
fn the_retrieve_tools_preset_reads_awkward_answers() {
    let m = retrieve_tools();
    let general = |t: &str| m.map_call_result(&json!({"content": [{"type": "text", "text": t}]}));
    let ok = |t: &str| general(t).unwrap_or_else(|e| panic!("{t}: {e}"));
    assert_eq!(ok(r#"{"tools": null}"#), Vec::<String>::new());
    assert_eq!(
        ok(r#"{"success": true, "tools": [{"id": "a:b"}]}"#),
        ["a:b"]
    );
    // the last of a duplicated field wins, as in serde_json's objects
    assert_eq!(
        ok(r#"{"tools": [{"name": "a:b", "name": "c:d"}]}"#),
        ["c:d"]
    );
    assert_eq!(
        ok(r#"{"tools": [{"tool": {"name": "t", "server_name": "s"}}]}"#),
        ["s:t"]
    );
    assert_eq!(
        ok(r#"{"tools": [{"name": "git\u0068ub:x", "description": "\ud83d\ude00 \n \""}]}"#),
        ["github:x"]
    );
    assert!(matches!(
        general(r#"{"tools": null, "success": false, "error": "boom"}"#),
        Err(MapError::ToolError { .. })
    ));
    assert_eq!(
        general(r#"{"tools": [{"id": "a:b"}], "tools": null}"#),
        Ok(vec![])
    );
    assert!(matches!(
        general(r#"{"tools": [{"name": "bare"}]}"#),
        Err(MapError::BadElement { .. })
    ));
    assert!(matches!(
        general(r#"{"tools": [{"name": "a:b", "inputSchema": {"x": 1e400}}]}"#),
        Err(MapError::NotJson { .. })
    ));
    // serde_json reads that key as its raw-value token and chokes on the key after it
    assert!(matches!(
        general(r#"{"tools": [{"$serde_json::private::RawValue": "1", "name": "a:b"}]}"#),
        Err(MapError::NotJson { .. })
    ));
    assert_eq!(
        general(r#"{"tools": {"x": {"id": "a:b"}}}"#),
        Ok(vec!["a:b".to_string()])
    );
    // the runaway limit: 10,000 tools are read, 10,001 are an error
    let many = |n: usize| {
        format!(
            r#"{{"tools": [{}]}}"#,
            vec![r#"{"id": "a:b"}"#; n].join(",")
        )
    };
    assert_eq!(ok(&many(MAX_RESULTS)).len(), MAX_RESULTS);
    assert!(matches!(
        general(&many(MAX_RESULTS + 1)),
        Err(MapError::Runtime { .. })
    ));
}

/// The fast path ([`Mapper::map_text_fast`]) against the general path (the jq filter through
/// jaq, [`Mapper::map_call_result`]) on one answer text: whenever the fast path answers, the
/// general path gives exactly that; returns whether the fast path answered.
fn fast_agrees(m: &Mapper, text: &str) -> bool {
    let general = m.map_call_result(&json!({"content": [{"type": "text", "text": text}]}));
    match m.map_text_fast(text) {
        Some(ids) => {
            assert_eq!(Ok(ids), general, "fast path diverged on {text}");
            true
        }
        None => false,
    }
}

#[test]
fn the_fast_path_gives_what_the_filter_gives() {
    let m = retrieve_tools();
    let deep = format!(
        r#"{{"tools": [{{"name": "a:b", "x": {}{}}}]}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    // (answer text, whether the fast path reads it)
    let cases: Vec<(String, bool)> = [
        (full_mode().to_string().as_str(), true),
        (compact_mode().to_string().as_str(), true),
        (r#"{"tools": null}"#, true),
        (r#"{"tools": []}"#, true),
        (r#"{"success": true, "tools": [{"id": "a:b"}]}"#, true),
        (r#"{"tools": [{"name": "a:b", "name": "c:d"}]}"#, true),
        (r#"{"tools": [{"name": "a:b", "name": 7, "id": "e:f"}]}"#, true),
        (r#"{"tools": [{"tool": {"name": "t", "server_name": "s"}}]}"#, true),
        (r#"{"tools": [{"name": "github:create_issue", "server": "github"}]}"#, true),
        (r#"{"tools": [{"name": "github__create_issue"}]}"#, true),
        (r#"{"tools": [{"server": "", "name": "x:y"}]}"#, true),
        (r#"{"tools": [{"name": "git\u0068ub:x", "description": "\ud83d\ude00 \n \""}]}"#, true),
        (r#"{"tools": [{"name": "a:b", "inputSchema": {"x": [1, -2, 3.5e10, true, null, {}]}}]}"#, true),
        (r#"  {"tools": [{"id": "a:b"}]}  "#, true),
        // not read by the fast path: the general path answers or refuses
        (r#"{"tools": null, "success": false, "error": "boom"}"#, false),
        (r#"{"tools": [{"id": "a:b"}], "tools": null}"#, false),
        (r#"{"tools": [{"name": "bare"}]}"#, false),
        (r#"{"tools": [{"name": "a:b"}, 3]}"#, false),
        (r#"{"tools": {"x": {"id": "a:b"}}}"#, false),
        (r#"{"tools": [["github", "create_issue"]]}"#, false),
        (r#"{"tools": ["github:create_issue"]}"#, false),
        (r#"{"tools": "a:b"}"#, false),
        (r#"{"tools": [{"name": "a:b", "inputSchema": {"x": 1e400}}]}"#, false),
        (r#"{"tools": [{"name": "a:b", "description": "\ud800"}]}"#, false),
        (r#"{"tools": [{"$serde_json::private::RawValue": "1", "name": "a:b"}]}"#, false),
        (r#"{"tools": [{"name": "a:b"}]} trailing"#, false),
        (r#"{"tools": [{"name": "a:b"},]}"#, false),
        (r#"[{"tools": [{"name": "a:b"}]}]"#, false),
        (r#"{"result": "{\"tools\": [{\"id\": \"a:b\"}]}"}"#, false),
        (r#"{"query": "x"}"#, false),
        ("not json at all", false),
        ("", false),
        (deep.as_str(), false),
    ]
    .into_iter()
    .map(|(t, fast)| (t.to_string(), fast))
    .collect();
    for (text, fast) in &cases {
        assert_eq!(
            fast_agrees(&m, text),
            *fast,
            "fast path read {text}: expected {fast}"
        );
    }
    // the runaway limit: 10,000 tools are read, 10,001 are left to the general path's error
    let many = |n: usize| {
        format!(
            r#"{{"tools": [{}]}}"#,
            vec![r#"{"id": "a:b"}"#; n].join(",")
        )
    };
    assert!(fast_agrees(&m, &many(MAX_RESULTS)));
    assert!(!fast_agrees(&m, &many(MAX_RESULTS + 1)));
    // only the preset's filter reads this way (under any id style)
    let other = Mapper::new(".tools[]", IdStyle::Auto).unwrap();
    assert_eq!(other.map_text_fast(&full_mode().to_string()), None);
    let pair = Mapper::new(MCPPROXY_RETRIEVE_TOOLS_FILTER, IdStyle::Pair).unwrap();
    assert!(fast_agrees(
        &pair,
        r#"{"tools": [{"server": "s", "name": "t"}]}"#
    ));
    assert!(!fast_agrees(&pair, r#"{"tools": [{"id": "s:t"}]}"#));
}

/// A generated `retrieve_tools` answer: tool objects of awkward fields in any order, with
/// duplicated keys, nested `tool` objects, wrong types and bulky fields.
fn generated_answer() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    const VALUES: [&str; 17] = [
        r#""github:create_issue""#,
        r#""github""#,
        r#""create_issue""#,
        r#""github__create_issue""#,
        r#""""#,
        r#"":x""#,
        r#""a:b:c""#,
        r#""s\u003at""#,
        "null",
        "7",
        "-0.5e3",
        "true",
        "[]",
        r#"["github", "create_issue"]"#,
        r#"{"name": "t", "server_name": "s"}"#,
        r#"{"id": "x:y"}"#,
        r#"{"type": "object", "properties": {"q": {"type": "string"}}}"#,
    ];
    const KEYS: [&str; 8] = [
        "server",
        "server_name",
        "name",
        "tool",
        "id",
        "description",
        "inputSchema",
        "score",
    ];
    let field = (0..KEYS.len(), 0..VALUES.len())
        .prop_map(|(k, v)| format!(r#""{}": {}"#, KEYS[k], VALUES[v]));
    let tool = proptest::collection::vec(field, 0..5).prop_map(|f| format!("{{{}}}", f.join(", ")));
    let tools = prop_oneof![
        1 => Just("null".to_string()),
        1 => (0..VALUES.len()).prop_map(|v| VALUES[v].to_string()),
        18 => proptest::collection::vec(tool, 0..5).prop_map(|t| format!("[{}]", t.join(", "))),
    ];
    let extra = prop_oneof![
        Just(r#""success": false, "#),
        Just(r#""success": true, "#),
        Just(r#""total": 3, "query": "q \" \\ \n", "#),
        Just(""),
    ];
    (extra, tools).prop_map(|(extra, tools)| format!(r#"{{{extra}"tools": {tools}}}"#))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]
    /// Wherever the fast path answers a generated answer, it agrees with the filter.
    #[test]
    fn the_fast_path_agrees_with_the_filter_on_generated_answers(text in generated_answer()) {
        fast_agrees(&retrieve_tools(), &text);
        fast_agrees(&Mapper::new(MCPPROXY_RETRIEVE_TOOLS_FILTER, IdStyle::DoubleUnderscore).unwrap(), &text);
    }
}

/// Issue 36: a filter comes from evalgate.toml, so from the pull request. It may not read
/// evalgate's environment (where the job's tokens are), end evalgate (`halt` exits 0: a gate
/// passed unmeasured) or print past the report; jq's ordinary filters all still work.
#[test]
fn a_filter_cannot_read_the_environment_end_evalgate_or_print() {
    for f in [
        "env",
        "env.GITHUB_TOKEN",
        "$ENV.GITHUB_TOKEN",
        "halt",
        "halt_error",
        "halt_error(0)",
        "stderr",
        "debug",
        "debug(\"x\")",
    ] {
        assert!(Mapper::new(f, IdStyle::Auto).is_err(), "{f} compiled");
    }
    let m = Mapper::new(
        ".tools | map(.name) | sort | .[] | ascii_downcase | tostring",
        IdStyle::Auto,
    )
    .unwrap();
    let ids = m.run(&json!({"tools": [{"name": "A"}]}));
    assert!(ids.is_ok(), "{ids:?}");
}
