//! Reading HTTP answers within bounds: the one body reader every HTTP client of evalgate uses
//! (the `rest` adapter, a launch's readiness checks, the live detectors' REST client).

/// The largest search answer read, in bytes: a body still growing past it is a broken answer,
/// not one to buffer until memory runs out.
pub const MAX_ANSWER: usize = 16 << 20;

/// The largest answer of a proxy's own REST API (its whole catalog at scale), in bytes.
pub const MAX_API_ANSWER: usize = 512 << 20;

/// Why a body could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// It grew past the limit (bytes); reading stopped there.
    #[error("the body is larger than {} MiB (reading stopped there)", .0 >> 20)]
    TooLarge(usize),
    /// The transfer failed or timed out.
    #[error("reading the body: {0}")]
    Read(reqwest::Error),
}

/// Reads a response body of at most `max` bytes (decoded as UTF-8, lossily), chunk by chunk:
/// a declared or actual larger body is refused without being buffered.
pub async fn read_body(mut resp: reqwest::Response, max: usize) -> Result<String, BodyError> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(BodyError::TooLarge(max));
    }
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Read)? {
        if buf.len() + chunk.len() > max {
            return Err(BodyError::TooLarge(max));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// What a path segment escapes: every byte but RFC 3986's unreserved characters.
const RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `s` as one path segment of a URL (RFC 3986 unreserved characters kept, every other byte
/// percent-encoded); also the percent-encoded form of a credential ([`super::secrets`]).
pub fn path_segment(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, RESERVED).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_name_is_one_url_segment() {
        assert_eq!(path_segment("github-2.v1_x~"), "github-2.v1_x~");
        assert_eq!(path_segment("a b/c?d"), "a%20b%2Fc%3Fd");
        assert_eq!(path_segment("é"), "%C3%A9");
    }

    #[test]
    fn a_body_over_the_limit_is_named_in_mebibytes() {
        assert_eq!(
            BodyError::TooLarge(MAX_ANSWER).to_string(),
            "the body is larger than 16 MiB (reading stopped there)"
        );
        assert_eq!(
            BodyError::TooLarge(MAX_API_ANSWER).to_string(),
            "the body is larger than 512 MiB (reading stopped there)"
        );
    }
}
