//! External security scanners as detectors (`[[scanner]]` in evalgate.toml).
//!
//! * **batch**: the entries are written as MCP `tools/list` results, `{"tools":[{name,
//!   description, inputSchema}]}`, one file per server (or one for all), split further so that
//!   no file repeats a tool name. The command template runs once per file with `{file}` (and
//!   `{server}`) replaced; its stdout must be JSON. The jq filter (jaq) turns that JSON into
//!   findings `{tool, flagged?, severity?, reason?}`.
//! * **lines**: the command runs once per evaluation run; each entry goes to its stdin as one
//!   JSON line `{id, server, name, description, inputSchema}` and one JSON line comes back,
//!   which the filter turns into `{flagged?, severity?, reason?}` (or a boolean).
//!
//! A finding is a flag unless it says `flagged: false` or its severity is below the configured
//! threshold. Exit codes are not verdicts: a scanner that exits non-zero but prints valid JSON
//! is read like any other; one that prints nothing usable, crashes or hangs is a named failure
//! of the system under test (exit code 3), never "nothing flagged".

use super::mapping::{IdStyle, Mapper};
use super::{Decision, Detector, SutError};
use crate::infra::process::{Managed, Spec, Supervisor};
use crate::pipeline::dataset::{Category, Entry};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Largest stdout read from a batch scanner.
const MAX_OUTPUT: u64 = 64 * 1024 * 1024;
/// After a scanner exits, how long its stdout may stay open (held by a process it started)
/// before what it wrote is taken as its whole answer.
const HELD_STDOUT_GRACE: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScannerMode {
    #[default]
    Batch,
    Lines,
}

/// One `[[scanner]]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScannerConfig {
    /// Detector name in reports.
    pub name: String,
    #[serde(default)]
    pub mode: ScannerMode,
    /// Program and arguments; `{file}` and `{server}` are replaced in batch mode.
    pub command: Vec<String>,
    /// jq filter from the scanner's JSON to findings.
    pub filter: String,
    /// Findings below this severity are flagged for review, not blocked: they count in the
    /// detector's `/review` row only (a name: info, low, medium, high, critical;
    /// or a number).
    pub severity_threshold: Option<Value>,
    /// Batch mode: one file per server, for scanners that judge a server's tools together
    /// [default: one file for all entries; either way a file never repeats a tool name].
    #[serde(default)]
    pub per_server: bool,
    /// Batch mode: scanner processes run at once [default: 2].
    pub concurrency: Option<usize>,
    /// Seconds per scanner invocation (batch) or per entry (lines) [default: 120 / 30].
    pub timeout: Option<f64>,
    /// Attack categories the scanner claims to cover [default: all].
    pub scope: Option<Vec<Category>>,
    /// Extra environment for the command.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// An external scanner, ready to run.
pub struct Scanner {
    cfg: ScannerConfig,
    mapper: Mapper,
    threshold: Option<f64>,
}

/// Severity names in rising order; a number is taken as is.
pub(crate) fn severity_rank(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "none" | "info" | "informational" | "safe" => Some(0.0),
            "low" => Some(1.0),
            "medium" | "moderate" => Some(2.0),
            "high" => Some(3.0),
            "critical" => Some(4.0),
            _ => None,
        },
        _ => None,
    }
}

/// What a scanner's outputs gave: the decision per entry id that has findings and, when its
/// output said something, what (a filter that took nothing from it is then a failure).
type Findings<'e> = (HashMap<&'e str, Decision>, Option<String>);

/// `--detectors scanner`: one detector per `[[scanner]]` table.
pub const DEF: super::kind::DetectorDef = super::kind::DetectorDef {
    name: "scanner",
    help: "The external scanners configured as [[scanner]] tables in evalgate.toml",
    live: false,
    build: |s, _| {
        if s.scanners.is_empty() {
            anyhow::bail!(
                "the scanner detector needs at least one [[scanner]] table in evalgate.toml (name, command, filter)"
            );
        }
        s.scanners
            .iter()
            .map(|cfg| Ok(Box::new(Scanner::new(cfg.clone())?) as Box<dyn Detector>))
            .collect()
    },
};

impl Scanner {
    pub fn new(cfg: ScannerConfig) -> anyhow::Result<Scanner> {
        if cfg.command.is_empty() {
            anyhow::bail!("[[scanner]] {:?}: `command` is empty", cfg.name);
        }
        if cfg.mode == ScannerMode::Batch && !cfg.command.iter().any(|a| a.contains("{file}")) {
            anyhow::bail!(
                "[[scanner]] {:?}: a batch scanner's command must contain {{file}}",
                cfg.name
            );
        }
        let mapper = Mapper::new(&cfg.filter, IdStyle::Auto)
            .map_err(|e| anyhow::anyhow!("[[scanner]] {:?}: {e}", cfg.name))?;
        let threshold = cfg.severity_threshold.as_ref()
            .map(|v| {
                severity_rank(v).ok_or_else(|| {
                    anyhow::anyhow!(
                        "[[scanner]] {:?}: severity_threshold {v} is not info, low, medium, high, critical or a number",
                        cfg.name
                    )
                })
            })
            .transpose()?;
        Ok(Scanner {
            cfg,
            mapper,
            threshold,
        })
    }

    fn concurrency(&self) -> usize {
        self.cfg.concurrency.unwrap_or(2).max(1)
    }

    fn timeout(&self) -> Duration {
        let default = match self.cfg.mode {
            ScannerMode::Batch => 120.0,
            ScannerMode::Lines => 30.0,
        };
        Duration::from_secs_f64(self.cfg.timeout.unwrap_or(default).max(0.001))
    }

    fn garbage(&self, detail: impl Into<String>) -> SutError {
        SutError::garbage(self.cfg.name.clone(), detail)
    }

    fn other(&self, detail: impl Into<String>) -> SutError {
        SutError::other(self.cfg.name.clone(), detail)
    }

    fn timed_out(&self, what: impl Into<String>) -> SutError {
        SutError::timeout(self.cfg.name.clone(), self.timeout().as_secs_f64(), what)
    }

    /// Reads one filter output as a finding about `id`, added to its decision in `findings`.
    fn add_finding<'e>(
        &self,
        findings: &mut HashMap<&'e str, Decision>,
        id: &'e str,
        v: &Value,
    ) -> Result<(), SutError> {
        let (flagged, severity, reason) = match v {
            Value::Bool(b) => (Some(*b), None, None),
            Value::Object(o) => (
                match o.get("flagged") {
                    None | Some(Value::Null) => None,
                    Some(Value::Bool(b)) => Some(*b),
                    Some(other) => {
                        return Err(self.garbage(format!(
                            "`flagged` must be a boolean, the filter gave {}",
                            clip(&other.to_string())
                        )));
                    }
                },
                o.get("severity").filter(|s| !s.is_null()),
                o.get("reason")
                    .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string)),
            ),
            other => {
                return Err(self.garbage(format!(
                    "the filter must yield objects {{tool, flagged?, severity?, reason?}} or booleans, it gave {}",
                    clip(&other.to_string())
                )));
            }
        };
        let flag = flagged.unwrap_or(true);
        let mut below = false;
        if let (Some(t), Some(s)) = (self.threshold, severity) {
            let rank = severity_rank(s).ok_or_else(|| {
                self.garbage(format!("unknown severity {}", clip(&s.to_string())))
            })?;
            below = rank < t;
        }
        let d = findings
            .entry(id)
            .or_insert_with(|| Decision::new(id, false, Vec::new()));
        // a flag below `severity_threshold` is flagged for review, not blocked
        d.flagged |= flag && !below;
        d.review |= flag && below;
        if flag {
            d.signals.extend(reason.map(|r| clip(&r)));
        }
        Ok(())
    }

    fn spawn(&self, sup: &Supervisor, args: Vec<String>) -> Result<Managed, SutError> {
        let mut spec = Spec::new(self.cfg.name.clone(), &args[0]);
        spec.args = args[1..].to_vec();
        spec.env = self.cfg.env.clone().into_iter().collect();
        spec.stdio = true;
        sup.spawn(spec)
            .map_err(|e| self.other(format!("cannot start {:?}: {e:#}", args[0])))
    }

    async fn batch<'e>(&self, entries: &'e [Entry]) -> Result<Findings<'e>, SutError> {
        // it holds the definitions under scan: gone after SIGINT/SIGTERM too
        let dir = super::launch::scratch_dir(&self.cfg.name, "evalgate-scan-")?;
        let files = files(entries, self.cfg.per_server);
        let mut jobs = Vec::new();
        for (i, file) in files.iter().enumerate() {
            let path = dir.path().join(format!("tools-{i:04}.json"));
            let tools: Vec<Value> = file.entries.iter().map(|(n, e)| tool_def(n, e)).collect();
            std::fs::write(&path, json!({ "tools": tools }).to_string())
                .map_err(|e| self.other(format!("cannot write {}: {e}", path.display())))?;
            let path = path.to_string_lossy();
            let fill = |a: &String| a.replace("{file}", &path).replace("{server}", &file.server);
            jobs.push(self.run_once(self.cfg.command.iter().map(fill).collect()));
        }
        use futures::StreamExt;
        let outputs: Vec<Result<Value, SutError>> = futures::stream::iter(jobs)
            .buffered(self.concurrency())
            .collect()
            .await;
        let mut findings = HashMap::new();
        // tools the output names: an output about them from which the filter took nothing
        // is a filter for another format, not a scanner that found nothing
        let mut named: BTreeSet<&str> = BTreeSet::new();
        for (file, out) in files.iter().zip(outputs) {
            let out = out?;
            let by_name: HashMap<&str, &Entry> =
                file.entries.iter().map(|(n, e)| (n.as_str(), *e)).collect();
            names_in(&out, &by_name, &mut named);
            let mapped = self.mapper.outputs(&out);
            for v in mapped.map_err(|e| self.garbage(e.to_string()))? {
                let tool = v.get("tool").and_then(Value::as_str).ok_or_else(|| {
                    self.garbage(format!(
                        "every finding needs a `tool` name in batch mode, the filter gave {}",
                        clip(&v.to_string())
                    ))
                })?;
                let entry = by_name.get(tool).ok_or_else(|| {
                    self.garbage(format!(
                        "the filter named tool {tool:?}, which is not in the scanned file"
                    ))
                })?;
                self.add_finding(&mut findings, &entry.id, &v)?;
            }
        }
        let said = named.first().map(|e| {
            let n = named.len();
            format!("the scanner's output names {n} of the scanned tools (e.g. {e:?})")
        });
        Ok((findings, said))
    }

    /// Runs one batch invocation: stdout must be JSON, whatever the exit code.
    async fn run_once(&self, args: Vec<String>) -> Result<Value, SutError> {
        let sup = Supervisor::new();
        let child = self.spawn(&sup, args)?;
        let (stdin, mut stdout) = child
            .take_stdio()
            .ok_or_else(|| self.other("no stdout pipe"))?;
        drop(stdin);
        let limit = self.timeout();
        let start = Instant::now();
        let mut buf = Vec::new();
        let mut stdout = (&mut stdout).take(MAX_OUTPUT);
        let read = stdout.read_to_end(&mut buf);
        // the scanner exited but its stdout stays open: a process it started (a daemon, a
        // language server) holds the pipe; what it wrote before exiting is its answer
        let exited = async {
            while child.try_exited().is_none() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(HELD_STDOUT_GRACE).await;
        };
        let mut held = false;
        let finished = tokio::time::timeout(limit, async {
            tokio::select! {
                _ = read => {}
                _ = exited => held = true,
            }
        })
        .await;
        if held || finished.is_err() {
            // a timeout, or whoever holds the pipe: stopped before what was written is read
            sup.shutdown(Duration::from_millis(500)).await;
        }
        if finished.is_err() {
            return Err(self.timed_out("scanning a batch file"));
        }
        let rest = limit.saturating_sub(start.elapsed()) + Duration::from_millis(200);
        let Some(status) = child.wait_exit(rest).await else {
            sup.shutdown(Duration::from_millis(500)).await;
            return Err(self.timed_out("waiting for the scanner to exit after its output"));
        };
        let killed = child.try_exit_status().is_some_and(|s| s.code().is_none());
        let status = if held {
            format!("{status}, while a process it started still held its stdout")
        } else {
            status
        };
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if killed || text.is_empty() {
            let output = if text.is_empty() {
                "no output".to_string()
            } else {
                format!("output {}", clip(text))
            };
            let stderr = clip(child.log_tail(5).trim());
            return Err(SutError::crashed(
                self.cfg.name.clone(),
                format!("{status} with {output} (stderr: {stderr})"),
            ));
        }
        serde_json::from_str(text).map_err(|e| {
            self.garbage(format!(
                "stdout is not JSON ({e}; {status}): {}",
                clip(text)
            ))
        })
    }

    async fn lines<'e>(&self, entries: &'e [Entry]) -> Result<Findings<'e>, SutError> {
        let sup = Supervisor::new();
        let child = self.spawn(&sup, self.cfg.command.clone())?;
        let (mut stdin, stdout) = child
            .take_stdio()
            .ok_or_else(|| self.other("no stdio pipes"))?;
        let mut lines = BufReader::new(stdout).lines();
        let limit = self.timeout();
        let mut findings = HashMap::new();
        // answers that held something the filter could have read
        let mut with_data = 0;
        // after a moment for its exit to be seen: what the scanner did, and its stderr
        let crashed = async |what: String| {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let status = child.try_exited().unwrap_or_else(|| "still running".into());
            let stderr = clip(child.log_tail(5).trim());
            let detail = format!("{what} ({status}; stderr: {stderr})");
            SutError::crashed(self.cfg.name.clone(), detail)
        };
        for e in entries {
            let line = json!({
                "id": e.id,
                "server": e.server,
                "name": entry_name(e),
                "description": e.description,
                "inputSchema": input_schema(e),
            })
            .to_string();
            let sent = async {
                stdin.write_all(format!("{line}\n").as_bytes()).await?;
                stdin.flush().await
            };
            if sent.await.is_err() {
                let what = format!("stopped reading input at entry {:?}", e.id);
                return Err(crashed(what).await);
            }
            let answer = match tokio::time::timeout(limit, lines.next_line()).await {
                Err(_) => {
                    sup.shutdown(Duration::from_millis(500)).await;
                    return Err(self.timed_out(format!("no answer line for entry {:?}", e.id)));
                }
                Ok(Ok(Some(l))) => l,
                Ok(_) => {
                    let what = format!("no answer line for entry {:?}", e.id);
                    return Err(crashed(what).await);
                }
            };
            let v: Value = serde_json::from_str(answer.trim()).map_err(|err| {
                self.garbage(format!(
                    "answer for entry {:?} is not JSON ({err}): {}",
                    e.id,
                    clip(answer.trim())
                ))
            })?;
            with_data += usize::from(has_data(&v));
            let mapped = self.mapper.outputs(&v);
            for o in mapped.map_err(|e| self.garbage(e.to_string()))? {
                self.add_finding(&mut findings, &e.id, &o)?;
            }
        }
        drop(stdin);
        sup.shutdown(Duration::from_millis(500)).await;
        let said = (with_data > 0).then(|| {
            if with_data == entries.len() {
                "the scanner answered every one with data".to_string()
            } else {
                format!("the scanner answered {with_data} of them with data")
            }
        });
        Ok((findings, said))
    }
}

#[async_trait]
impl Detector for Scanner {
    fn name(&self) -> &str {
        &self.cfg.name
    }
    fn source(&self) -> String {
        format!("external scanner `{}`", self.cfg.command[0])
    }
    /// Each invocation (batch) or entry (lines) has its own timeout; the whole call may take
    /// as long as all of them in sequence.
    fn time_limit(&self, per_request: Duration, entries: &[Entry]) -> Duration {
        let units = match self.cfg.mode {
            ScannerMode::Batch => files(entries, self.cfg.per_server)
                .len()
                .div_ceil(self.concurrency()),
            ScannerMode::Lines => entries.len(),
        };
        per_request.max(self.timeout() * units.max(1) as u32 + Duration::from_secs(1))
    }
    fn scope(&self) -> Option<Vec<Category>> {
        self.cfg.scope.clone()
    }
    async fn detect(&mut self, entries: &[Entry], _run: usize) -> Result<Vec<Decision>, SutError> {
        let (findings, said) = match self.cfg.mode {
            ScannerMode::Batch => self.batch(entries).await?,
            ScannerMode::Lines => self.lines(entries).await?,
        };
        // Zero verdicts from output that said something: the filter does not read this
        // scanner's output (written for another format or version), so every entry would count
        // as not flagged. A named failure, never recall 0 and FPR 0.
        if let Some(output) = said.filter(|_| findings.is_empty()) {
            return Err(self.garbage(format!(
                "the filter `{}` yielded no finding, not even `flagged: false`, for any of the {} entries, although {output}: a filter written for another output format? Run the command by hand and fix the filter; a scanner that clears a tool should yield {{tool, flagged: false}} for it",
                clip(&self.cfg.filter),
                entries.len()
            )));
        }
        let verdict = |e: &Entry| {
            let found = findings.get(e.id.as_str()).cloned();
            let mut d = found.unwrap_or_else(|| Decision::new(&e.id, false, Vec::new()));
            // review only when no finding blocks it; each reason once, sorted
            d.review &= !d.flagged;
            d.signals.sort();
            d.signals.dedup();
            d
        };
        Ok(entries.iter().map(verdict).collect())
    }
}

/// Adds to `named` the scanned tools whose name is a string anywhere in `v`.
fn names_in<'a>(v: &Value, by_name: &HashMap<&'a str, &Entry>, named: &mut BTreeSet<&'a str>) {
    match v {
        Value::String(s) => {
            if let Some((n, _)) = by_name.get_key_value(s.as_str()) {
                named.insert(*n);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| names_in(x, by_name, named)),
        Value::Object(o) => o.values().for_each(|x| names_in(x, by_name, named)),
        _ => {}
    }
}

/// A per-entry answer that holds something: a value other than null, or a container holding
/// one (`{}`, `[]`, `null` and their nestings say nothing).
fn has_data(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(a) => a.iter().any(has_data),
        Value::Object(o) => o.values().any(has_data),
        _ => true,
    }
}

/// The tool name an entry is served under: its `tool`, else its id.
pub(crate) fn entry_name(e: &Entry) -> String {
    e.tool.clone().unwrap_or_else(|| e.id.clone())
}

/// The definition as the scanner should see it now: for a rug pull, the `after` one.
fn input_schema(e: &Entry) -> Value {
    e.afters()
        .first()
        .and_then(|a| a.get("inputSchema").cloned())
        .or_else(|| e.input_schema.clone())
        .unwrap_or_else(|| json!({"type": "object"}))
}

/// An entry as an MCP tool definition served under `name`.
pub(crate) fn tool_def(name: &str, e: &Entry) -> Value {
    json!({
        "name": name,
        "description": e.description,
        "inputSchema": input_schema(e),
    })
}

struct File<'a> {
    server: String,
    entries: Vec<(String, &'a Entry)>,
}

/// Groups entries into files: by server (or one group), then split so no file repeats a name.
fn files(entries: &[Entry], per_server: bool) -> Vec<File<'_>> {
    let server_of = |e: &Entry| e.server.clone().filter(|_| per_server).unwrap_or_default();
    // a stable sort: by server, each server's entries in corpus order
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by_key(|e| server_of(e));
    let mut out: Vec<File> = Vec::new();
    for e in sorted {
        let (server, name) = (server_of(e), entry_name(e));
        let free = out
            .iter_mut()
            .find(|f| f.server == server && f.entries.iter().all(|(n, _)| *n != name));
        match free {
            Some(f) => f.entries.push((name, e)),
            None => out.push(File {
                server,
                entries: vec![(name, e)],
            }),
        }
    }
    out
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(300).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severities_order_and_numbers_pass_through() {
        assert!(severity_rank(&json!("HIGH")) > severity_rank(&json!("medium")));
        assert_eq!(severity_rank(&json!(0.7)), Some(0.7));
        assert_eq!(severity_rank(&json!("bogus")), None);
    }
}
