//! Arbitrary JSON text through the shipped result mappers (mcpproxy's `retrieve_tools` MCP
//! filter and REST search filter), both as a bare payload and as an MCP CallToolResult.
//!
//! Invariants: no panic; `Ok(ids)` holds only canonical ids (`server:tool`, both parts
//! non-empty, no `:` in the server); the payload gives the same ids whether it arrives bare, as
//! `structuredContent`, or as JSON text in a content block (even after a non-JSON preamble
//! block), except that an in-band envelope (`{"success": false, ...}`, a lone `result`/`text`
//! string) is opened only inside a CallToolResult, so there the three deliveries agree with each
//! other and `success: false` is a `ToolError`; `isError: true` always gives `ToolError`; error
//! messages that promise truncation are bounded.

use evalgate::pipeline::sut::mapping::{
    IdStyle, MCPPROXY_REST_SEARCH_FILTER, MCPPROXY_RETRIEVE_TOOLS_FILTER, MapError, Mapper,
};
use serde_json::{Value, json};
use std::sync::OnceLock;

fn mappers() -> &'static [Mapper; 2] {
    static M: OnceLock<[Mapper; 2]> = OnceLock::new();
    M.get_or_init(|| {
        [
            Mapper::new(MCPPROXY_RETRIEVE_TOOLS_FILTER, IdStyle::Auto).unwrap(),
            Mapper::new(MCPPROXY_REST_SEARCH_FILTER, IdStyle::Auto).unwrap(),
        ]
    })
}

/// One fuzz input (the body of the `result_mappers` fuzz target; the seed replay test calls it too).
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return;
    };
    for m in mappers() {
        let bare = m.map_payload(&v);
        check(m, &bare, &v);

        // the same input read as a CallToolResult
        let as_result = m.map_call_result(&v);
        check(m, &as_result, &v);
        if v.get("isError").and_then(Value::as_bool) == Some(true) {
            assert!(
                matches!(as_result, Err(MapError::ToolError { .. })),
                "isError: true gave {as_result:?}"
            );
        }

        // the payload delivered three ways gives the same ranked ids
        let mut ways = vec![(
            "text block",
            json!({"content": [{"type": "text", "text": text}], "isError": false}),
        )];
        ways.push((
            "text block after a non-JSON preamble",
            json!({"content": [
                {"type": "text", "text": "Found these tools:"},
                {"type": "text", "text": text}
            ]}),
        ));
        if !v.is_null() {
            ways.push((
                "structuredContent",
                json!({"content": [{"type": "text", "text": "see structured content"}],
                       "structuredContent": v}),
            ));
        }
        // `map_call_result` opens an in-band envelope (`{"success": false, ...}` is a tool error,
        // a lone `result`/`text` string is decoded) and `map_payload` does not, by design: for
        // an envelope the deliveries are compared with each other instead of with the bare one
        let envelope = v.as_object().is_some_and(|o| {
            o.get("success") == Some(&Value::Bool(false))
                || (o.len() == 1
                    && o.get("result")
                        .or_else(|| o.get("text"))
                        .is_some_and(Value::is_string))
        });
        let failed_in_band = v.get("success") == Some(&Value::Bool(false));
        let got: Vec<(&str, Result<Vec<String>, MapError>)> = ways
            .into_iter()
            .map(|(how, wrapped)| (how, m.map_call_result(&wrapped)))
            .collect();
        let (ref_how, reference) = if envelope {
            (got[0].0, &got[0].1)
        } else {
            ("bare", &bare)
        };
        for (how, got) in &got {
            check(m, got, &v);
            if failed_in_band {
                assert!(
                    matches!(got, Err(MapError::ToolError { .. })),
                    "{}: success: false as {how} gave {got:?}",
                    m.filter()
                );
            }
            match (reference, got) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{}: {ref_how} vs {how}", m.filter()),
                (Err(a), Err(b)) => assert_eq!(
                    std::mem::discriminant(a),
                    std::mem::discriminant(b),
                    "{}: {ref_how} {a:?} vs {how} {b:?}",
                    m.filter()
                ),
                _ => panic!("{}: {ref_how} {reference:?} but {how} {got:?}", m.filter()),
            }
        }
    }
}

fn check(m: &Mapper, r: &Result<Vec<String>, MapError>, input: &Value) {
    match r {
        Ok(ids) => {
            for id in ids {
                let (server, tool) = id.split_once(':').unwrap_or_else(|| {
                    panic!("{}: id {id:?} has no colon (input {input})", m.filter())
                });
                assert!(
                    !server.is_empty() && !tool.is_empty(),
                    "{}: id {id:?} has an empty part (input {input})",
                    m.filter()
                );
            }
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(!shown.is_empty());
            // quoted values are cut to about 200 characters, tool error text to about 1000
            let (field, max) = match e {
                // (`found` is Debug-quoted: escapes may take up to 10 characters each)
                MapError::NotJson { found } => (found, 200 * 10 + 100),
                MapError::BadElement { element, .. } => (element, 200 + 40),
                MapError::ToolError { text } => (text, 1000 + 40),
                MapError::Compile { .. } | MapError::NeverEnds { .. } => {
                    panic!("shipped filter failed to compile: {e}")
                }
                MapError::Runtime { .. } => return,
            };
            let n = field.chars().count();
            assert!(n <= max, "{} chars in {e:?}", n);
        }
    }
}
