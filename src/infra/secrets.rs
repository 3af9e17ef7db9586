//! Credentials never reach a report, a terminal or GitHub.
//!
//! Two layers: every URL in text loses its user information, its query values, its matrix
//! parameters' values and its fragment's values (where API keys travel:
//! `http://user:PASS@host/mcp;jsessionid=S?apikey=KEY#tok=T` becomes
//! `http://***@host/mcp;jsessionid=***?apikey=***#tok=***`), and every credential evalgate was
//! given (the job's tokens and credential-named variables, header values, URL passwords, keys
//! and key-like path segments, the values of `[sut.*] env`, a launched proxy's API key) is
//! registered here and replaced by `***` wherever it appears, for instance echoed back inside a
//! server's error message. SECURITY.md states the rule.

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
    for form in [v.to_string(), super::http::path_segment(v)] {
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

/// A name containing one of these (upper-cased) marks a credential.
const CREDENTIAL_MARKS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "KEY",
];

/// Whether an environment variable's name marks a credential (`GITHUB_TOKEN`,
/// `ACTIONS_ID_TOKEN_REQUEST_TOKEN`, `MY_SERVICE_PASSWORD`, `npm_config__authToken`; not
/// `GIT_AUTHOR_NAME`).
pub fn names_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase().replace("AUTHOR", "");
    CREDENTIAL_MARKS.iter().any(|m| upper.contains(m))
}

/// Registers the credentials in evalgate's environment: the value of every variable whose name
/// marks one (the GitHub token in `EVALGATE_GITHUB_TOKEN` or `GITHUB_TOKEN`, the runner's
/// `ACTIONS_RUNTIME_TOKEN` and `ACTIONS_ID_TOKEN_REQUEST_TOKEN`, any `*_PASSWORD`...) and
/// what any URL-valued variable carries (`HTTPS_PROXY=http://user:PASS@proxy`). evalgate's own
/// settings are no credentials, but for the token: `EVALGATE_COMMENT_KEY=evalgate` names a key
/// and masking "evalgate" would break the comment's marker.
pub fn register_environment(vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>) {
    for (k, v) in vars {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        let own_setting = k.starts_with("EVALGATE_") && k != "EVALGATE_GITHUB_TOKEN";
        if names_credential(k) && !own_setting {
            register(v);
        }
        if v.contains("://") {
            register_url(v);
        }
    }
}

/// Registers what a URL given to evalgate carries: its user name and password, its query
/// values, its matrix parameters' values (`;jsessionid=V`), its fragment's values (`#tok=V`),
/// and every path segment that looks like a key (`looks_like_key`: `/api/KEY/mcp`).
pub fn register_url(url: &str) {
    let url = url.trim();
    let Some(parts) = split_url(url) else { return };
    if mask_one(url) != url {
        ACTIVE.store(true, Ordering::Relaxed);
    }
    let both = |v: &str| {
        register(v);
        register(&percent_decode(v));
    };
    if let Some(user) = parts.userinfo {
        user.split(':').for_each(both);
    }
    // the value of `k=v` (a query or fragment pair, a matrix parameter), or a bare value
    let value = |p: &str| both(p.split_once('=').map_or(p, |(_, v)| v));
    if let Some(q) = parts.query {
        q.split('&').for_each(value);
    }
    for segment in parts.path.split('/') {
        let mut pieces = segment.split(';');
        let name = pieces.next().unwrap_or_default();
        if looks_like_key(&percent_decode(name)) {
            both(name);
        }
        pieces.for_each(value);
    }
    if let Some(f) = parts.fragment {
        if f.contains('=') {
            f.split('&').for_each(value);
        } else if looks_like_key(&percent_decode(f)) {
            both(f);
        }
    }
}

/// Whether a path segment (or a bare fragment) of a URL given to evalgate looks like a key: at
/// least 16 characters, only letters, digits, `-` and `_`, with both letters and digits (an
/// API key, a session id, a UUID; not `mcp`, `api`, `v1` or `search-tools`).
fn looks_like_key(s: &str) -> bool {
    s.len() >= 16
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        && s.chars().any(|c| c.is_ascii_alphabetic())
        && s.chars().any(|c| c.is_ascii_digit())
}

/// `text` with every URL's credentials and every registered credential masked, and what is
/// left of a key-like credential that a message's length limit cut short.
pub fn scrub(text: &str) -> String {
    let mut out = redact_url(text);
    let s = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    for secret in s.iter() {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), MASK);
        }
    }
    for secret in s.iter().filter(|s| looks_like_key(s)) {
        out = mask_fragments(out, secret);
    }
    out
}

/// Shorter pieces of a key-like credential are left alone: a piece this long is most of a key
/// (at least 16 characters), and an ordinary word inside a made-up key is not masked everywhere.
const FRAGMENT: usize = 12;

/// `text` with every piece of `key` at least [`FRAGMENT`] characters long masked. Messages
/// quote a system's answer only up to a length, and a cut can fall inside a credential the
/// system echoed: the whole credential is then no longer there to match, but most of it is.
/// Only for key-like credentials (`looks_like_key`: ASCII, random-looking), whose pieces do not
/// occur in ordinary text by chance.
fn mask_fragments(mut text: String, key: &str) -> String {
    // a piece of FRAGMENT bytes holds FRAGMENT - GRAM + 1 grams of GRAM bytes, so the text's
    // grams read at that stride meet every piece: one lookup per 5 bytes of text
    const GRAM: usize = 8;
    const STRIDE: usize = FRAGMENT - GRAM + 1;
    let key = key.as_bytes();
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or_default());
    // every gram of `key` as one number, sorted, with where it starts in `key`
    let mut grams: Vec<(u64, usize)> = key.windows(GRAM).map(word).zip(0..).collect();
    grams.sort_unstable();
    // the first piece found: a gram of `key`, widened to all of `key` around it that the text
    // matches, when that is FRAGMENT bytes or more
    let found = |t: &[u8]| {
        let mut starts = (0..(t.len() + 1).saturating_sub(GRAM)).step_by(STRIDE);
        starts.find_map(|at| {
            let w = word(&t[at..at + GRAM]);
            let same = &grams[grams.partition_point(|g| g.0 < w)..];
            same.iter().take_while(|g| g.0 == w).find_map(|&(_, i)| {
                let left = (1..=i.min(at))
                    .take_while(|&n| t[at - n] == key[i - n])
                    .count();
                let right = (GRAM..key.len() - i)
                    .take_while(|&n| t.get(at + n) == Some(&key[i + n]))
                    .count();
                let (from, to) = (at - left, at + GRAM + right);
                (to - from >= FRAGMENT).then_some((from, to))
            })
        })
    };
    while let Some((from, to)) = found(text.as_bytes()) {
        // key-like credentials are ASCII, so both ends fall on character boundaries
        text.replace_range(from..to, MASK);
    }
    text
}

/// Scrubs every string in a serialisable value (a report): serialised, scrubbed, and read back
/// only when some string changed, so a clean report costs one walk.
pub fn scrub_value<T: serde::Serialize + serde::de::DeserializeOwned>(v: T) -> T {
    if !ACTIVE.load(Ordering::Relaxed) {
        return v;
    }
    let Ok(mut json) = serde_json::to_value(&v) else {
        return v;
    };
    let changed = walk(&mut json, &mut |s| {
        let t = scrub(s);
        let changed = t != *s;
        *s = t;
        changed
    });
    match changed {
        true => serde_json::from_value(json).unwrap_or(v),
        false => v,
    }
}

/// Calls `f` on every string (object keys too, in place); true when any call returned true.
fn walk(v: &mut serde_json::Value, f: &mut dyn FnMut(&mut String) -> bool) -> bool {
    use serde_json::Value;
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter_mut().fold(false, |any, x| walk(x, f) | any),
        Value::Object(o) => {
            let mut any = false;
            *o = std::mem::take(o)
                .into_iter()
                .map(|(mut k, mut x)| {
                    any |= f(&mut k) | walk(&mut x, f);
                    (k, x)
                })
                .collect();
            any
        }
        _ => false,
    }
}

/// A URL cut at its delimiters: `scheme://` `userinfo` `@host` `path` `?query` `#fragment`.
struct UrlParts<'a> {
    /// Through `://`.
    scheme: &'a str,
    userinfo: Option<&'a str>,
    /// The authority after the user information (from its `@`).
    host: &'a str,
    path: &'a str,
    query: Option<&'a str>,
    /// After `#`, which ends the query.
    fragment: Option<&'a str>,
}

fn split_url(url: &str) -> Option<UrlParts<'_>> {
    let sep = url.find("://")?;
    let (scheme, rest) = url.split_at(sep + 3);
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, after) = rest.split_at(auth_end);
    let at = authority.rfind('@');
    let (rest, fragment) = after
        .split_once('#')
        .map_or((after, None), |(r, f)| (r, Some(f)));
    let (path, query) = rest
        .split_once('?')
        .map_or((rest, None), |(p, q)| (p, Some(q)));
    Some(UrlParts {
        scheme,
        userinfo: at.map(|at| &authority[..at]),
        host: &authority[at.unwrap_or(0)..],
        path,
        query,
        fragment,
    })
}

/// Characters that end a URL inside running text.
fn url_end(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '<' | '>' | '`' | ')' | ']' | '}' | '|' | '\\'
        )
}

/// Every URL in `text` with its user information and the values of its query, matrix
/// parameters and fragment masked; other text unchanged.
pub fn redact_url(text: &str) -> String {
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

/// One URL (scheme included) with its user information and the values of its query, matrix
/// parameters and fragment masked (a bare fragment, `#section`, is kept).
fn mask_one(url: &str) -> String {
    let Some(u) = split_url(url) else {
        return url.to_string();
    };
    let mut out = String::from(u.scheme);
    if u.userinfo.is_some() {
        out.push_str(MASK);
    }
    out.push_str(u.host);
    // a segment's matrix parameters (`;k=v`) are masked like pairs, but a bare one is kept
    let path: Vec<String> = u
        .path
        .split('/')
        .map(|segment| match segment.split_once(';') {
            Some((name, params)) => format!("{name};{}", mask_pairs(params, ';', false)),
            None => segment.to_string(),
        })
        .collect();
    out.push_str(&path.join("/"));
    if let Some(q) = u.query {
        out.push('?');
        out.push_str(&mask_pairs(q, '&', true));
    }
    if let Some(f) = u.fragment {
        out.push('#');
        out.push_str(&if f.contains('=') {
            mask_pairs(f, '&', true)
        } else {
            f.to_string()
        });
    }
    out
}

/// `k=v&k2=v2` (a query, a fragment; `sep` between pairs) with every value masked, and a value
/// without a key too when `bare`.
fn mask_pairs(pairs: &str, sep: char, bare: bool) -> String {
    let masked: Vec<String> = pairs
        .split(sep)
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if !v.is_empty() => format!("{k}={MASK}"),
            None if bare && !pair.is_empty() => MASK.to_string(),
            _ => pair.to_string(),
        })
        .collect();
    masked.join(&sep.to_string())
}

/// `s` with its `%XX` escapes decoded and a `+` read as a space (as a query has it).
fn percent_decode(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
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
    fn what_a_length_limit_left_of_a_key_is_masked_too() {
        let token = "ghp_cutTest9f8e7d6c5b4a3F2E1D0";
        register(token);
        // cut at the end of a quoted answer, and from the start of a quoted tail
        let head = format!("answer: {}… (+5000 chars)", &token[..25]);
        assert_eq!(scrub(&head), "answer: ***… (+5000 chars)");
        let tail = format!("…{} was echoed", &token[9..]);
        assert_eq!(scrub(&tail), "…*** was echoed");
        // a piece in the middle, and two in one text
        let both = format!("{} and {}", &token[3..20], &token[12..]);
        assert_eq!(scrub(&both), "*** and ***");
        // fewer than 12 characters of it, and ordinary text, are left alone
        assert_eq!(scrub("ghp_cutTest and ghp_ ok"), "ghp_cutTest and ghp_ ok");
        assert_eq!(scrub("ghp_cutTest9f"), "***");
        // every piece of 12 or more, at every offset in the text: the stride meets each
        for from in 0..token.len() {
            for to in (from + 12)..=token.len() {
                for pad in 0..6 {
                    let text = format!("{}{}/", "x".repeat(pad), &token[from..to]);
                    assert_eq!(scrub(&text), format!("{}***/", "x".repeat(pad)), "{text}");
                }
            }
        }
        // a credential that is not key-like is masked whole only
        register("correct horse battery staple");
        assert_eq!(scrub("correct horse batt…"), "correct horse batt…");
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
    fn matrix_parameters_and_fragment_values_are_masked_a_bare_fragment_kept() {
        assert_eq!(
            redact_url("http://h/api/x;jsessionid=S3SS10N;v=/mcp?k=1#tok=T0K&a=b"),
            "http://h/api/x;jsessionid=***;v=/mcp?k=***#tok=***&a=***"
        );
        assert_eq!(redact_url("http://h/a#section"), "http://h/a#section");
        // a `?` inside the fragment starts no query: the fragment's own values are masked
        assert_eq!(redact_url("http://h/a#x?y=1"), "http://h/a#x?y=***");
        assert_eq!(redact_url("http://h/a#x?y"), "http://h/a#x?y");
        let once = redact_url("http://h/a;s=1#t=2");
        assert_eq!(redact_url(&once), once);
    }

    #[test]
    fn a_given_url_registers_its_key_like_path_segments_matrix_and_fragment_values() {
        register_url(
            "http://h/api/k3yInThePath0123456789/mcp;jsessionid=sessionValue9#tok=fragmentValue9",
        );
        let s = scrub(
            "GET /api/k3yInThePath0123456789/mcp;jsessionid=sessionValue9 401; fragmentValue9",
        );
        assert_eq!(s, "GET /api/***/mcp;jsessionid=*** 401; ***");
        // ordinary segments are not keys
        assert!(!looks_like_key("mcp"));
        assert!(!looks_like_key("search-tools-endpoint"));
        assert!(looks_like_key("550e8400-e29b-41d4-a716-446655440000"));
    }

    #[test]
    fn the_environment_registers_credential_named_values_and_url_passwords() {
        let vars = [
            ("GITHUB_TOKEN", "ghs_envToken0001"),
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "idRequest0002"),
            ("MY_SERVICE_PASSWORD", "servicePass0003"),
            ("HTTPS_PROXY", "http://proxyUser:proxyPass0004@proxy:3128"),
            ("GIT_AUTHOR_NAME", "Some Author Name"),
            ("HOME", "/home/runner"),
            ("EVALGATE_COMMENT_KEY", "evalgate-matrix"),
            ("EVALGATE_GITHUB_TOKEN", "ghs_evalgateToken0005"),
        ];
        register_environment(vars.iter().map(|(k, v)| (k.into(), v.into())));
        assert_eq!(
            scrub(
                "ghs_envToken0001 idRequest0002 servicePass0003 proxyPass0004 ghs_evalgateToken0005"
            ),
            "*** *** *** *** ***"
        );
        assert_eq!(
            scrub("<!-- evalgate:evalgate-matrix -->"),
            "<!-- evalgate:evalgate-matrix -->"
        );
        assert_eq!(
            scrub("Some Author Name at /home/runner"),
            "Some Author Name at /home/runner"
        );
        assert!(names_credential("npm_config__authToken"));
        assert!(!names_credential("GIT_AUTHOR_EMAIL"));
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
