//! What a launch serves (the replay upstreams, one corpus file per server; a free port and a
//! fresh API key), and the upstream list a launched proxy reads, written in the proxy's own
//! config language, with the `{placeholders}` of its command line, environment and working
//! directory filled.
//!
//! Built-in formats: mcpproxy's (`mcpServers` as an array, plus its settings), the common
//! `{"mcpServers": {name: {command, args, env}}}` map, and a `{"servers": [...]}` list. Anything
//! else (YAML, TOML, KDL, ...) is a minijinja template the user supplies; a proxy that registers
//! servers through its own CLI uses `setup` commands instead (format `none`).

use crate::infra::secrets::register;
use crate::pipeline::dataset::{Corpus, corpus_json};
use crate::pipeline::replay::ServedNames;
use minijinja::value::Serde;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// How the upstream list is written for the proxy (`[sut.launch] config_format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfigFormat {
    /// mcpproxy's config: `{"mcpServers": [{name, protocol, command, args, ...}], ...}`.
    #[default]
    Mcpproxy,
    /// `{"mcpServers": {"name": {"command", "args", "env"}}}` (Claude Desktop style).
    McpServers,
    /// `{"servers": [{"name", "command", "args", "env"}]}`.
    Servers,
    /// A minijinja template (`[sut.launch] template = "file"`), for any other language.
    Template,
    /// No file: servers reach the proxy through `setup` commands or `{servers_json}`.
    None,
}

impl ConfigFormat {
    /// The file name `{config}` gets when `config_name` is not set.
    pub fn default_name(self) -> &'static str {
        match self {
            ConfigFormat::Mcpproxy => "mcpproxy.json",
            ConfigFormat::McpServers => "mcp.json",
            ConfigFormat::Servers => "servers.json",
            ConfigFormat::Template => "proxy.conf",
            ConfigFormat::None => "unused.conf",
        }
    }
}

/// One upstream server as the proxy should start it.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamCmd {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// `[sut.launch] upstream_transport = "http"`: the server's Streamable HTTP endpoint
    /// (evalgate started it), which the config names instead of a command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The `{"name": {"command", "args", "env"}}` map: the `mcp-servers` format's body and the value
/// of `{servers_json}`.
pub fn servers_map(ups: &[UpstreamCmd]) -> Value {
    Value::Object(
        ups.iter()
            .map(|u| (u.name.clone(), entry(u, json!({}))))
            .collect(),
    )
}

/// One server's entry: `head`, then its URL (served over HTTP) or its command, arguments and
/// environment (when it has one).
fn entry(u: &UpstreamCmd, mut e: Value) -> Value {
    match &u.url {
        Some(url) => e["url"] = json!(url),
        None => {
            e["command"] = json!(u.command);
            e["args"] = json!(u.args);
            if !u.env.is_empty() {
                e["env"] = json!(u.env);
            }
        }
    }
    e
}

/// `[sut.launch] server_fields` merged into one server's entry `e` of a generated config:
/// in string values (at any depth) `{server}` is the server's name, `{server_command}` its
/// command line (each argument quoted for a POSIX shell when it needs it) and `{server_url}`
/// its URL (`upstream_transport = "http"`, else empty).
pub fn merge_server_fields(
    e: &mut Value,
    u: &UpstreamCmd,
    fields: &serde_json::Map<String, Value>,
) {
    fn fill(v: &Value, with: &[(&str, &str)]) -> Value {
        match v {
            Value::String(s) => {
                Value::String(with.iter().fold(s.clone(), |acc, (k, x)| acc.replace(k, x)))
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, with)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), fill(x, with))).collect())
            }
            other => other.clone(),
        }
    }
    if fields.is_empty() {
        return;
    }
    let line = std::iter::once(&u.command)
        .chain(&u.args)
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    let with = [
        ("{server_command}", line.as_str()),
        ("{server_url}", u.url.as_deref().unwrap_or_default()),
        ("{server}", &u.name),
    ];
    for (k, v) in fields {
        e[k] = fill(v, &with);
    }
}

/// `w` as one POSIX shell word: as it is when it holds only safe characters, else single-quoted.
fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The `mcp-servers` and `servers` formats.
pub fn json_config(
    format: ConfigFormat,
    ups: &[UpstreamCmd],
    proxy_config: &serde_json::Map<String, Value>,
    server_fields: &serde_json::Map<String, Value>,
) -> Option<Value> {
    let entries = ups.iter().map(|u| {
        let head = match format {
            ConfigFormat::Servers => json!({"name": u.name}),
            _ => json!({}),
        };
        let mut e = entry(u, head);
        merge_server_fields(&mut e, u, server_fields);
        (u.name.clone(), e)
    });
    let mut v = match format {
        ConfigFormat::McpServers => json!({"mcpServers": Value::Object(entries.collect())}),
        ConfigFormat::Servers => json!({"servers": entries.map(|(_, e)| e).collect::<Vec<_>>()}),
        _ => return None,
    };
    // `[sut.launch] proxy_config`: the proxy's own top-level settings
    for (k, x) in proxy_config {
        v[k] = x.clone();
    }
    Some(v)
}

/// Renders a user's template with `servers` (each `name`, `command`, `args`, `env`) and every
/// placeholder value (`data_dir`, `home`, `workdir`, `port`, `listen`, `url`, `api_key`).
/// minijinja's `tojson` filter quotes a value safely for JSON and YAML.
pub fn render_template(
    template_path: &Path,
    source: &str,
    ups: &[UpstreamCmd],
    vars: &Vars,
    proxy_config: &serde_json::Map<String, Value>,
) -> Result<String, String> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    let name = template_path.display().to_string();
    env.add_template_owned(name.clone(), source.to_string())
        .map_err(|e| format!("{name}: the template does not parse: {e:#}"))?;
    let mut ctx: BTreeMap<String, minijinja::Value> = vars
        .0
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    ctx.insert("servers".into(), Serde(ups).into());
    ctx.insert("proxy_config".into(), Serde(proxy_config).into());
    env.get_template(&name)
        .and_then(|t| t.render(ctx))
        .map_err(|e| format!("{name}: the template does not render: {e:#}"))
}

/// Placeholder values (`{name}` → value), filled into command, args, env and cwd.
#[derive(Debug, Clone, Default)]
pub struct Vars(pub Vec<(String, String)>);

impl Vars {
    pub fn set(&mut self, k: &str, v: impl Into<String>) {
        let v = v.into();
        match self.0.iter_mut().find(|(n, _)| n == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k.to_string(), v)),
        }
    }

    /// Replaces every known `{name}`; unknown braces are left alone (JSON in an env value).
    pub fn fill(&self, s: &str) -> String {
        self.0.iter().fold(s.to_string(), |acc, (k, v)| {
            acc.replace(&format!("{{{k}}}"), v)
        })
    }
}

/// A free loopback port (the listener is dropped before the proxy binds it).
pub(super) fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// 128 random bits as hex, from the kernel.
pub(super) fn random_key() -> String {
    let mut b = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if !ok {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        b = (t ^ (std::process::id() as u128) << 64).to_le_bytes();
    }
    let key: String = b.iter().map(|x| format!("{x:02x}")).collect();
    // a key is a credential: masked wherever a proxy's message echoes it
    register(&key);
    key
}

/// Writes one small corpus file per server into `dir`, so that each replay server parses only
/// its own tools (a hundred replays of a multi-megabyte corpus would cost seconds of CPU each).
pub fn write_server_corpora(
    corpus: &Corpus,
    dir: &Path,
) -> std::io::Result<BTreeMap<String, PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut out = BTreeMap::new();
    let servers: BTreeSet<&str> = corpus.tools.iter().map(|t| t.server_name()).collect();
    for (i, s) in servers.into_iter().enumerate() {
        let part = Corpus {
            version: corpus.version.clone(),
            generated_from: corpus.generated_from.clone(),
            servers: corpus
                .servers
                .iter()
                .filter(|x| x.name == s)
                .cloned()
                .collect(),
            tools: corpus
                .tools
                .iter()
                .filter(|t| t.server_name() == s)
                .cloned()
                .collect(),
        };
        // server names are data: the file name is an index, never the name
        let p = dir.join(format!("server-{i:04}.json"));
        std::fs::write(&p, corpus_json(&part))?;
        out.insert(s.to_string(), p);
    }
    Ok(out)
}

/// How the generated config treats tool changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Quarantine {
    /// Retrieval: quarantine off, every server `trust_mode: "auto"`, so the catalog is the corpus.
    Off,
    /// Rug-pull play: quarantine on, servers unquarantined but not auto-trusted (no `trust_mode`
    /// unless `[rug_pull_live] trust_mode` gives one), so the first toolset is the approved
    /// baseline and later changes are the proxy's to catch.
    On(Option<String>),
}

/// The scratch mcpproxy config: replay upstreams (server name → the arguments of evalgate's
/// replay), explicit `quarantined: false`, no response truncation, no socket, no telemetry, no
/// periodic tool-discovery sweep.
pub fn proxy_config(
    upstreams: &BTreeMap<String, Vec<String>>,
    replay_bin: &Path,
    listen: &str,
    data_dir: &Path,
    api_key: &str,
    quarantine: Quarantine,
) -> Value {
    let trust_mode = match &quarantine {
        Quarantine::Off => Some("auto"),
        Quarantine::On(mode) => mode.as_deref(),
    };
    let upstreams: Vec<Value> = upstreams
        .iter()
        .map(|(s, args)| {
            let mut e = json!({
                "name": s,
                "protocol": "stdio",
                "command": replay_bin,
                "args": args,
                "enabled": true,
                "quarantined": false,
            });
            if let Some(mode) = trust_mode {
                e["trust_mode"] = json!(mode);
            }
            e
        })
        .collect();
    json!({
        "listen": listen,
        "data_dir": data_dir,
        "enable_socket": false,
        "api_key": api_key,
        "quarantine_enabled": quarantine != Quarantine::Off,
        "tool_response_limit": 0,
        "tools_limit": 100,
        "telemetry": {"enabled": false},
        // hermetic: no update poll, no look-ups of the servers' repositories
        "update_check": {"enabled": false},
        "check_server_repo": false,
        // no periodic re-listing of every upstream (mcpproxy's default is every 5 min): a sweep
        // in the middle of a rug-pull play re-applies the changed definitions a second time,
        // and a second pass changes mcpproxy's verdict on some changes
        "tool_discovery_interval": "0s",
        "mcpServers": upstreams,
    })
}

/// Replay arguments serving each server's own corpus file, its tools named as `names` says.
pub fn corpus_upstreams(
    corpus_files: &BTreeMap<String, PathBuf>,
    names: ServedNames,
) -> BTreeMap<String, Vec<String>> {
    corpus_files
        .iter()
        .map(|(s, p)| {
            let p = p.display().to_string();
            let mut args = vec!["replay", "--corpus", &p, "--server", s];
            if names == ServedNames::Prefixed {
                args.extend(["--names", "prefixed"]);
            }
            (s.clone(), args.into_iter().map(String::from).collect())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ups() -> Vec<UpstreamCmd> {
        vec![
            UpstreamCmd {
                name: "Design Components".into(),
                command: "/bin/evalgate".into(),
                args: vec!["replay".into(), "--server".into(), "a\"b".into()],
                env: BTreeMap::new(),
                url: None,
            },
            UpstreamCmd {
                name: "git".into(),
                command: "/bin/evalgate".into(),
                args: vec![],
                env: BTreeMap::from([("K".into(), "v".into())]),
                url: None,
            },
        ]
    }

    #[test]
    fn the_built_in_formats_carry_every_server_with_its_command() {
        let m = json_config(
            ConfigFormat::McpServers,
            &ups(),
            &Default::default(),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(m["mcpServers"]["Design Components"]["args"][2], "a\"b");
        assert_eq!(m["mcpServers"]["git"]["env"]["K"], "v");
        assert!(m["mcpServers"]["Design Components"].get("env").is_none());
        let l = json_config(
            ConfigFormat::Servers,
            &ups(),
            &Default::default(),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(l.as_object().unwrap().len(), 1);
        assert_eq!(l["servers"][0]["name"], "Design Components");
        assert_eq!(l["servers"][1]["command"], "/bin/evalgate");
        assert!(
            json_config(
                ConfigFormat::Mcpproxy,
                &ups(),
                &Default::default(),
                &Default::default()
            )
            .is_none()
        );
        // proxy_config at the top level of both
        let mut extra = serde_json::Map::new();
        extra.insert("version".into(), json!("1.0"));
        for f in [ConfigFormat::McpServers, ConfigFormat::Servers] {
            let v = json_config(f, &ups(), &extra, &Default::default()).unwrap();
            assert_eq!(v["version"], "1.0", "{f:?}");
        }
    }

    /// `server_fields` reach every server entry of both built-in formats, with the server's
    /// name and its command line (shell-quoted where needed) filled in at any depth.
    #[test]
    fn server_fields_reach_every_server_entry_with_its_name_and_command() {
        let mut fields = serde_json::Map::new();
        fields.insert("transport".into(), json!("stdio"));
        fields.insert("url".into(), json!("{server_command}"));
        fields.insert("meta".into(), json!({"labels": ["{server}", 3]}));
        let l = json_config(ConfigFormat::Servers, &ups(), &Default::default(), &fields).unwrap();
        assert_eq!(l["servers"][0]["transport"], "stdio");
        assert_eq!(
            l["servers"][0]["url"],
            "/bin/evalgate replay --server 'a\"b'"
        );
        assert_eq!(
            l["servers"][0]["meta"],
            json!({"labels": ["Design Components", 3]})
        );
        assert_eq!(l["servers"][1]["url"], "/bin/evalgate");
        // the entry's own keys stay unless a field names them
        assert_eq!(l["servers"][1]["env"]["K"], "v");
        let m = json_config(
            ConfigFormat::McpServers,
            &ups(),
            &Default::default(),
            &fields,
        )
        .unwrap();
        assert_eq!(m["mcpServers"]["git"]["transport"], "stdio");
        assert_eq!(m["mcpServers"]["git"]["meta"]["labels"][0], "git");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        // upstreams served over HTTP are named by URL, in both formats
        let mut http = ups();
        http[0].url = Some("http://127.0.0.1:9/mcp".into());
        let mut f = serde_json::Map::new();
        f.insert("endpoint".into(), json!("{server_url}"));
        let l = json_config(ConfigFormat::Servers, &http, &Default::default(), &f).unwrap();
        assert_eq!(
            l["servers"][0],
            json!({"name": "Design Components", "url": "http://127.0.0.1:9/mcp", "endpoint": "http://127.0.0.1:9/mcp"})
        );
        let m = json_config(ConfigFormat::McpServers, &http, &Default::default(), &f).unwrap();
        assert_eq!(
            m["mcpServers"]["Design Components"]["url"],
            "http://127.0.0.1:9/mcp"
        );
        assert!(
            m["mcpServers"]["Design Components"]
                .get("command")
                .is_none()
        );
        assert_eq!(m["mcpServers"]["git"]["endpoint"], "");
    }

    /// `proxy_config` reaches every format that writes a config: merged into the top level of
    /// the built-in ones, a variable of a template; a `.json.j2` template quotes every value
    /// as JSON by itself (minijinja's escaping by file name), so a hostile name stays a string.
    #[test]
    fn proxy_config_reaches_templates_and_a_json_template_quotes_values_itself() {
        let mut extra = serde_json::Map::new();
        extra.insert("version".into(), json!(2));
        extra.insert("gateway".into(), json!({"log": "info"}));
        let src = r#"{"v": {{ proxy_config.version }}, "g": {{ proxy_config.gateway|tojson }}, "first": {{ servers[0].args[2] }}, "sep": {{ "," }}}"#;
        let out = render_template(
            Path::new("c.json.j2"),
            src,
            &ups(),
            &Vars::default(),
            &extra,
        )
        .unwrap();
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(
            v,
            json!({"v": 2, "g": {"log": "info"}, "first": "a\"b", "sep": ","})
        );
    }

    #[test]
    fn a_yaml_template_quotes_hostile_names_and_strict_mode_names_a_typo() {
        let mut vars = Vars::default();
        vars.set("data_dir", "/tmp/d");
        let src = "dir: {{ data_dir|tojson }}\nupstreams:\n{% for s in servers %}  {{ s.name|tojson }}:\n    command: {{ s.command|tojson }}\n    args: {{ s.args|tojson }}\n{% endfor %}";
        let out = render_template(
            Path::new("t.yaml.j2"),
            src,
            &ups(),
            &vars,
            &Default::default(),
        )
        .unwrap();
        assert!(out.contains("\"Design Components\":"), "{out}");
        assert!(out.contains(r#""a\"b""#), "{out}");
        assert!(out.contains("dir: \"/tmp/d\""), "{out}");
        let err = render_template(
            Path::new("t.j2"),
            "{{ data_dri }}",
            &ups(),
            &vars,
            &Default::default(),
        )
        .unwrap_err();
        assert!(
            err.starts_with("t.j2: the template does not render"),
            "{err}"
        );
        let err = render_template(
            Path::new("t.j2"),
            "{% for %}",
            &ups(),
            &vars,
            &Default::default(),
        )
        .unwrap_err();
        assert!(
            err.starts_with("t.j2: the template does not parse"),
            "{err}"
        );
    }

    #[test]
    fn placeholders_fill_known_names_and_leave_other_braces() {
        let mut v = Vars::default();
        v.set("port", "8080");
        v.set("port", "9090");
        assert_eq!(v.fill("{port} {\"a\": 1} {nope}"), "9090 {\"a\": 1} {nope}");
    }
}
