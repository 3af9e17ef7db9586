//! Credentials never reach a report, a terminal or GitHub.
//!
//! Two layers: every URL in text loses its user information and its query values (where API
//! keys travel: `http://user:PASS@host/mcp?apikey=KEY` becomes `http://***@host/mcp?apikey=***`),
//! and every credential evalgate was given (header values, URL passwords and keys, the GitHub
//! token, a launched proxy's API key) is registered here and replaced by `***` wherever it
//! appears, for instance echoed back inside a server's error message.

use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// What replaces a credential.
pub const MASK: &str = "***";

/// Shorter values are not registered: replacing them would garble ordinary text, and no real
/// credential is that short (a URL's short key is still masked by the URL rule).
const MIN_SECRET: usize = 6;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Set once a credential or a URL carrying one was given: until then reports hold none of ours
/// and are not walked.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Registers a credential (and its percent-encoded form) to be masked from now on.
pub fn register(value: &str) {
    let v = value.trim();
    if v.chars().count() < MIN_SECRET {
        return;
    }
    ACTIVE.store(true, Ordering::Relaxed);
    let mut s = SECRETS.write().unwrap_or_else(|p| p.into_inner());
    for form in [v.to_string(), percent_encode(v)] {
        if !s.contains(&form) {
            s.push(form);
        }
    }
    // longest first, so a secret containing another is masked whole
    s.sort_by_key(|x| std::cmp::Reverse(x.len()));
}

/// Registers an HTTP header's value: the whole value and, for `Bearer T` / `Basic T`, the
/// credential after the scheme.
pub fn register_header(value: &str) {
    register(value);
    if let Some((_, cred)) = value.trim().split_once(' ') {
        register(cred);
    }
}

/// Registers what a URL carries: its user name and password, and its query values.
pub fn register_url(url: &str) {
    let Some(parts) = split_url(url) else { return };
    if parts.userinfo.is_some() || parts.query.is_some() {
        ACTIVE.store(true, Ordering::Relaxed);
    }
    if let Some(user) = parts.userinfo {
        for p in user.split(':') {
            register(p);
            register(&percent_decode(p));
        }
    }
    if let Some(q) = parts.query {
        for pair in q.split('&') {
            let v = pair.split_once('=').map_or(pair, |(_, v)| v);
            register(v);
            register(&percent_decode(v));
        }
    }
}

/// `text` with every URL's credentials and every registered credential masked.
pub fn scrub(text: &str) -> String {
    let mut out = mask_urls(text);
    let s = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    for secret in s.iter() {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), MASK);
        }
    }
    out
}

/// Whether [`scrub`] would change `text`.
fn needs_scrub(text: &str) -> bool {
    if text.contains("://") && mask_urls(text) != text {
        return true;
    }
    let s = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    s.iter().any(|secret| text.contains(secret.as_str()))
}

/// Scrubs every string in a serialisable value (a report): serialised, scrubbed, read back.
/// Only when some string needs it, so a clean report costs one walk.
pub fn scrub_value<T: serde::Serialize + serde::de::DeserializeOwned>(v: T) -> T {
    if !ACTIVE.load(Ordering::Relaxed) {
        return v;
    }
    let Ok(mut json) = serde_json::to_value(&v) else {
        return v;
    };
    if !walk(&mut json, &mut |s| needs_scrub(s)) {
        return v;
    }
    walk(&mut json, &mut |s| {
        let t = scrub(s);
        let changed = t != *s;
        *s = t;
        changed
    });
    serde_json::from_value(json).unwrap_or(v)
}

/// Calls `f` on every string (object keys too); true when any call returned true.
fn walk(v: &mut serde_json::Value, f: &mut dyn FnMut(&mut String) -> bool) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter_mut().fold(false, |any, x| walk(x, f) | any),
        Value::Object(o) => {
            let mut any = false;
            let keys: Vec<String> = o.keys().cloned().collect();
            for k in keys {
                let mut nk = k.clone();
                if f(&mut nk) {
                    any = true;
                    if let Some(val) = o.remove(&k) {
                        o.insert(nk.clone(), val);
                    }
                }
                if let Some(val) = o.get_mut(&nk) {
                    any |= walk(val, f);
                }
            }
            any
        }
        _ => false,
    }
}

/// A URL with its user information and query values masked; other text unchanged.
pub fn redact_url(url: &str) -> String {
    mask_urls(url)
}

struct UrlParts<'a> {
    userinfo: Option<&'a str>,
    query: Option<&'a str>,
}

fn split_url(url: &str) -> Option<UrlParts<'_>> {
    let (_, rest) = url.split_once("://")?;
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_end];
    let userinfo = authority.rfind('@').map(|at| &authority[..at]);
    let after = &rest[auth_end..];
    let query = after.find('?').map(|q| {
        let tail = &after[q + 1..];
        &tail[..tail.find('#').unwrap_or(tail.len())]
    });
    Some(UrlParts { userinfo, query })
}

/// Characters that end a URL inside running text.
fn url_end(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '<' | '>' | '`' | ')' | ']' | '}' | '|' | '\\'
        )
}

fn mask_urls(text: &str) -> String {
    if !text.contains("://") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        // the scheme: letters, digits, + - . before "://"
        let scheme_start = rest[..i]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(i, |(j, _)| j);
        let end = rest[i + 3..]
            .find(url_end)
            .map_or(rest.len(), |e| i + 3 + e);
        out.push_str(&rest[..scheme_start]);
        out.push_str(&mask_one(&rest[scheme_start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// One URL (scheme included) with user information and query values masked.
fn mask_one(url: &str) -> String {
    let Some(sep) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, rest) = (&url[..sep + 3], &url[sep + 3..]);
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_end];
    let mut out = String::from(scheme);
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(MASK);
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    let after = &rest[auth_end..];
    let Some(q) = after.find('?') else {
        out.push_str(after);
        return out;
    };
    out.push_str(&after[..=q]);
    let tail = &after[q + 1..];
    let (query, frag) = tail.split_at(tail.find('#').unwrap_or(tail.len()));
    let masked: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if !v.is_empty() => format!("{k}={MASK}"),
            Some(_) => pair.to_string(),
            None if pair.is_empty() => String::new(),
            None => MASK.to_string(),
        })
        .collect();
    out.push_str(&masked.join("&"));
    out.push_str(frag);
    out
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit()
        {
            let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            out.push(hex(b[i + 1]) * 16 + hex(b[i + 2]));
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_user_information_and_query_values() {
        assert_eq!(
            redact_url("http://user:SECRET@127.0.0.1:1/mcp?apikey=KEY&x=1#f"),
            "http://***@127.0.0.1:1/mcp?apikey=***&x=***#f"
        );
        assert_eq!(
            scrub("error sending request for url (http://127.0.0.1:1/mcp?apikey=KEY), retry"),
            "error sending request for url (http://127.0.0.1:1/mcp?apikey=***), retry"
        );
        // nothing to hide: unchanged, and text without URLs is untouched
        assert_eq!(scrub("see https://x.org/a/b."), "see https://x.org/a/b.");
        assert_eq!(scrub("a:b@c and ?q=1"), "a:b@c and ?q=1");
        // a masked URL stays masked
        let once = redact_url("http://u:p@h/?k=v");
        assert_eq!(redact_url(&once), once);
    }

    #[test]
    fn registered_credentials_are_masked_wherever_they_appear() {
        register_header("Bearer tok_4f9a8b7c6d");
        register_url("http://u:p%40ss-word@h/x?token=abc%2Bdef123");
        let s = scrub("401: token tok_4f9a8b7c6d rejected; p@ss-word; abc+def123; abc%2Bdef123");
        assert_eq!(s, "401: token *** rejected; ***; ***; ***");
        // short values are left to the URL rule
        register("abc");
        assert_eq!(scrub("abc"), "abc");
    }

    #[test]
    fn a_value_is_scrubbed_string_by_string() {
        register("sk_live_0123456789");
        let v = serde_json::json!({"a": ["ok", "key sk_live_0123456789"], "sk_live_0123456789": 1,
            "u": "at http://***@h/x, key sk_live_0123456789"});
        let s = scrub_value(v);
        assert_eq!(
            s,
            serde_json::json!({"a": ["ok", "key ***"], "***": 1, "u": "at http://***@h/x, key ***"})
        );
    }
}
