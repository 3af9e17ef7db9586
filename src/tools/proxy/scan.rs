//! mcpproxy's security-scan surface, served by the reference proxy with evalgate's reference
//! rules as its detector: `POST /api/v1/servers/{name}/scan` starts a job,
//! `GET …/scan/status` reports it (pending → running → completed | failed), `GET …/scan/report`
//! returns the findings, each located at `server:tool`.

use super::State;
use crate::pipeline::dataset::RawJson;
use crate::pipeline::sut::rules::{scan_text, tool_text};
use crate::tools::snapshot::rfc3339;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// The scanner id this proxy reports and accepts.
pub const SCANNER_ID: &str = "evalgate-rules";

/// One server's latest scan, serialised as `…/scan/status` reports it (`error` always null).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScanJob {
    pub job_id: String,
    pub server_name: String,
    pub status: &'static str,
    pub started_at: String,
    pub completed_at: Option<String>,
    error: (),
    #[serde(skip)]
    pub report: Option<Value>,
}

static NEXT_JOB: AtomicU64 = AtomicU64::new(1);

/// The category mcpproxy-style findings carry for each reference rule.
fn category(rule: &str) -> &'static str {
    match rule {
        "cross-tool-instruction" => "tool_shadowing",
        "secret-exfiltration" | "hidden-instruction-tag" | "secrecy-directive" => "tool_poisoning",
        "injection-phrase" => "prompt_injection",
        _ => "obfuscation",
    }
}

/// Scans every tool of `server` in the live catalog with the reference rules.
pub async fn scan_server(state: &State, server: &str) -> Value {
    let cat = state.catalog.lock().await;
    let mut findings = Vec::new();
    let mut scanned = 0;
    let tools = &cat.corpus.tools;
    for t in tools.iter().filter(|t| t.server_name() == server) {
        scanned += 1;
        let text = tool_text(
            &t.description,
            t.schema.as_ref().map(RawJson::value).as_ref(),
        );
        for rule in scan_text(&text) {
            let evidence: String = t.description.chars().take(200).collect();
            findings.push(json!({
                "rule_id": rule,
                "severity": "high",
                "category": category(&rule),
                "threat_type": category(&rule),
                "threat_level": "dangerous",
                "title": format!("{rule} in {}", t.tool_id),
                "location": t.tool_id,
                "scanner": SCANNER_ID,
                "evidence": evidence,
                "confidence": 0.9,
                "tier": "hard",
            }));
        }
    }
    let dangerous = !findings.is_empty();
    json!({
        "server_name": server,
        "findings": findings,
        "verdict": if dangerous { "dangerous" } else { "clean" },
        "risk_score": if dangerous { 100 } else { 0 },
        "tools_scanned": scanned,
        "scan_complete": true,
        "scanners": [SCANNER_ID],
    })
}

/// Registers a scan job as `pending` (so a status request right after the 202 finds it), runs
/// it in the background, and returns it as first reported.
pub async fn start(state: std::sync::Arc<State>, server: String) -> ScanJob {
    let job = ScanJob {
        job_id: format!("scan-{}", NEXT_JOB.fetch_add(1, Ordering::SeqCst)),
        server_name: server.clone(),
        status: "pending",
        started_at: rfc3339(SystemTime::now()),
        completed_at: None,
        error: (),
        report: None,
    };
    let id = job.job_id.clone();
    state.scans.lock().await.insert(server.clone(), job.clone());
    if state.fault.cancels_scans() {
        crate::errln!("evalgate proxy: injected fault: cancelling the scan of {server:?}");
        set(&state, &server, &id, "cancelled", None).await;
        return job;
    }
    tokio::spawn(async move {
        set(&state, &server, &id, "running", None).await;
        let report = scan_server(&state, &server).await;
        set(&state, &server, &id, "completed", Some(report)).await;
    });
    job
}

/// Moves `server`'s job `id` (not a newer one that replaced it) to `status`; any status but
/// `running` is final and stamps `completed_at`.
async fn set(state: &State, server: &str, id: &str, status: &'static str, report: Option<Value>) {
    let mut jobs = state.scans.lock().await;
    if let Some(j) = jobs.get_mut(server).filter(|j| j.job_id == id) {
        j.status = status;
        j.completed_at = (status != "running").then(|| rfc3339(SystemTime::now()));
        j.report = report;
    }
}
