//! The proxy's own REST API (mcpproxy's `/api/v1/…`), as the live detectors call it.

use crate::infra::http::{MAX_API_ANSWER, read_body};
use crate::pipeline::sut::launch::Running;
use serde_json::Value;
use std::time::Duration;

/// GET/POST under the proxy's REST API, each bounded by 10 s; returns `data` of the envelope.
pub(super) async fn api(
    run: &Running,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Result<Value, String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    let mut req = http
        .request(method.clone(), format!("{}{path}", run.base))
        .header("X-API-Key", &run.api_key);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    let status = resp.status();
    let text = read_body(resp, MAX_API_ANSWER)
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    envelope(&method, path, status, &text)
}

/// `data` of an answer's envelope (`{success, data, error}`), or why there is none: a body
/// that is not JSON, an HTTP error, or `success: false`. An answer without an envelope is its
/// own data.
fn envelope(
    method: &reqwest::Method,
    path: &str,
    status: reqwest::StatusCode,
    text: &str,
) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text).map_err(|_| {
        let head: String = text.chars().take(200).collect();
        format!("{method} {path}: HTTP {status}, body is not JSON: {head:?}")
    })?;
    if !status.is_success() || v.get("success") == Some(&Value::Bool(false)) {
        return Err(format!(
            "{method} {path}: HTTP {status}: {}",
            v.get("error").cloned().unwrap_or(v.clone())
        ));
    }
    Ok(v.get("data").cloned().unwrap_or(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::{Method, StatusCode};
    use serde_json::json;

    #[test]
    fn the_envelope_gives_its_data_or_says_why_not() {
        let get = |status, text| envelope(&Method::GET, "/api/v1/tools", status, text);
        assert_eq!(
            get(StatusCode::OK, r#"{"success":true,"data":{"tools":[]}}"#),
            Ok(json!({"tools": []}))
        );
        // no envelope: the answer is its own data
        assert_eq!(
            get(StatusCode::OK, r#"{"tools":[1]}"#),
            Ok(json!({"tools": [1]}))
        );
        assert_eq!(
            get(
                StatusCode::OK,
                r#"{"success":false,"error":"no such server"}"#
            ),
            Err(r#"GET /api/v1/tools: HTTP 200 OK: "no such server""#.into())
        );
        assert_eq!(
            get(StatusCode::NOT_FOUND, r#"{"detail":"gone"}"#),
            Err(r#"GET /api/v1/tools: HTTP 404 Not Found: {"detail":"gone"}"#.into())
        );
        assert_eq!(
            get(StatusCode::BAD_GATEWAY, "<html>bad gateway</html>"),
            Err(r#"GET /api/v1/tools: HTTP 502 Bad Gateway, body is not JSON: "<html>bad gateway</html>""#.into())
        );
        let long = "x".repeat(500);
        let e = get(StatusCode::OK, &long).unwrap_err();
        assert!(e.ends_with(&format!("{:?}", "x".repeat(200))), "{e}");
    }
}
