//! Reading chosen parts of a large JSON document as it streams past, never holding it whole.
//!
//! A report.json of 20,000 queries is some 45 MB, and re-scoring it needs only its raw
//! observations. [`select`] walks the document in 64 KiB pieces: the caller says, for each
//! value by its path, whether to go into it, take it (its exact bytes, handed over to be decoded
//! with serde_json) or skip it. Skipped values are checked for their structure (brackets,
//! strings, literals) but not decoded, so skipping is a tight byte loop, and memory is the
//! largest taken value, not the document.
//!
//! Any problem is an error; callers that have a slower reading with precise messages fall back
//! to it.

use std::io::Read;

/// One step of the path to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// What to do with the value at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Walk its members (an object's or array's; a scalar is skipped).
    Descend,
    /// Hand its bytes to the taker.
    Take,
    Skip,
}

/// Called with each taken value's path and bytes.
pub type Taker<'a> = dyn FnMut(&[Seg], &[u8]) -> anyhow::Result<()> + 'a;

/// How deep [`select`] follows nesting before it refuses the document.
const MAX_DEPTH: usize = 256;

/// Walks the JSON document `r`, asking `want` about each value it reaches and calling `take`
/// with the bytes of each value it is told to take. Errors: malformed JSON (as far as the walk
/// sees it), nesting deeper than 256, a read error, or the taker's own error.
pub fn select(
    r: impl Read,
    want: &mut dyn FnMut(&[Seg]) -> Want,
    take: &mut Taker<'_>,
) -> anyhow::Result<()> {
    let mut s = Scanner {
        r,
        buf: vec![0; 1 << 16].into_boxed_slice(),
        pos: 0,
        len: 0,
        taken: None,
        offset: 0,
    };
    let mut path = Vec::new();
    s.value(&mut path, want, take)?;
    s.ws()?;
    match s.peek()? {
        None => Ok(()),
        Some(_) => s.fail("text after the document"),
    }
}

struct Scanner<R> {
    r: R,
    buf: Box<[u8]>,
    pos: usize,
    len: usize,
    /// The bytes of the value being taken, up to the start of `buf` (from `start` in `buf`).
    taken: Option<(Vec<u8>, usize)>,
    /// Bytes consumed before `buf` (for messages).
    offset: u64,
}

impl<R: Read> Scanner<R> {
    fn fail<T>(&self, what: &str) -> anyhow::Result<T> {
        anyhow::bail!("at byte {}: {what}", self.offset + self.pos as u64)
    }

    /// The next byte without consuming it; `None` at the end.
    #[inline(always)]
    fn peek(&mut self) -> anyhow::Result<Option<u8>> {
        if self.pos == self.len && !self.refill()? {
            return Ok(None);
        }
        Ok(Some(self.buf[self.pos]))
    }

    fn refill(&mut self) -> anyhow::Result<bool> {
        if let Some((bytes, start)) = &mut self.taken {
            bytes.extend_from_slice(&self.buf[*start..self.len]);
            *start = 0;
        }
        self.offset += self.len as u64;
        self.pos = 0;
        self.len = loop {
            match self.r.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        };
        Ok(self.len > 0)
    }

    fn next(&mut self) -> anyhow::Result<u8> {
        match self.peek()? {
            Some(b) => {
                self.pos += 1;
                Ok(b)
            }
            None => self.fail("unexpected end of the document"),
        }
    }

    fn ws(&mut self) -> anyhow::Result<()> {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek()? {
            self.pos += 1;
        }
        Ok(())
    }

    fn expect(&mut self, c: u8) -> anyhow::Result<()> {
        self.ws()?;
        if self.next()? != c {
            return self.fail(&format!("expected `{}`", c as char));
        }
        Ok(())
    }

    /// Past a string whose opening quote was consumed; its raw bytes when `keep`.
    fn string(&mut self, keep: bool) -> anyhow::Result<Vec<u8>> {
        let mut raw = Vec::new();
        loop {
            if self.pos == self.len && !self.refill()? {
                return self.fail("unterminated string");
            }
            let rest = &self.buf[self.pos..self.len];
            match first_special(rest) {
                None => {
                    if keep {
                        raw.extend_from_slice(rest);
                    }
                    self.pos = self.len;
                }
                Some(i) => {
                    let b = rest[i];
                    if keep {
                        raw.extend_from_slice(&rest[..=i]);
                    }
                    self.pos += i + 1;
                    match b {
                        b'"' => return Ok(raw),
                        b'\\' => {
                            let e = self.next()?;
                            if keep {
                                raw.push(e);
                            }
                        }
                        _ => return self.fail("a control character in a string"),
                    }
                }
            }
        }
    }

    /// Past a number or `true`/`false`/`null`.
    fn scalar(&mut self) -> anyhow::Result<()> {
        let mut word = [0u8; 5];
        let (mut n, mut last) = (0, 0);
        while let Some(b) = self.peek()? {
            if !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')) {
                break;
            }
            if n < word.len() {
                word[n] = b;
            }
            n += 1;
            last = b;
            self.pos += 1;
        }
        let w = &word[..n.min(5)];
        // a number's characters, loosely: the decoder of a taken value checks it exactly
        let number = n > 0
            && n <= 64
            && (w[0] == b'-' || w[0].is_ascii_digit())
            && last.is_ascii_digit()
            && w.iter().all(|b| b.is_ascii_digit() || b"-+.eE".contains(b));
        if number || (n <= 5 && matches!(w, b"true" | b"false" | b"null")) {
            Ok(())
        } else {
            self.fail("expected a JSON value")
        }
    }

    /// Past one value of any kind, checking its structure: brackets, keys, `:` and `,`,
    /// strings and literals.
    fn skip(&mut self) -> anyhow::Result<()> {
        // each open bracket: its closing byte and, in an object, whether its key was read
        let mut open: Vec<(u8, bool)> = Vec::new();
        loop {
            self.ws()?;
            let key_next = matches!(open.last(), Some((b'}', false)));
            match self.next()? {
                b'"' => {
                    self.string(false)?;
                }
                _ if key_next => return self.fail("expected a key (a string)"),
                c @ (b'{' | b'[') => {
                    if open.len() == MAX_DEPTH {
                        return self.fail("nested too deeply");
                    }
                    let close = if c == b'{' { b'}' } else { b']' };
                    self.ws()?;
                    if self.peek()? == Some(close) {
                        self.pos += 1;
                    } else {
                        open.push((close, false));
                        continue;
                    }
                }
                _ => {
                    self.pos -= 1;
                    self.scalar()?;
                }
            }
            // after a key: its `:`; after a value: a `,` or closing brackets
            loop {
                let Some((close, keyed)) = open.last_mut() else {
                    return Ok(());
                };
                self.ws()?;
                let c = self.next()?;
                if *close == b'}' && !*keyed {
                    if c != b':' {
                        return self.fail("expected `:`");
                    }
                    *keyed = true;
                    break;
                }
                if c == b',' {
                    *keyed = false;
                    break;
                }
                if c != *close {
                    return self.fail("expected `,` or a closing bracket");
                }
                open.pop();
            }
        }
    }

    fn value(
        &mut self,
        path: &mut Vec<Seg>,
        want: &mut dyn FnMut(&[Seg]) -> Want,
        take: &mut Taker<'_>,
    ) -> anyhow::Result<()> {
        if path.len() > MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        self.ws()?;
        match want(path) {
            Want::Skip => self.skip(),
            Want::Take => {
                self.peek()?;
                self.taken = Some((Vec::new(), self.pos));
                let skipped = self.skip();
                let (mut bytes, start) = self.taken.take().unwrap_or_default();
                skipped?;
                bytes.extend_from_slice(&self.buf[start..self.pos]);
                take(path, &bytes)
            }
            Want::Descend => {
                let close = match self.peek()? {
                    Some(b'{') => b'}',
                    Some(b'[') => b']',
                    _ => return self.skip(),
                };
                self.pos += 1;
                self.ws()?;
                if self.peek()? == Some(close) {
                    self.pos += 1;
                    return Ok(());
                }
                // the members of an object or an array, each under its key or index
                for i in 0.. {
                    let seg = match close {
                        b'}' => Seg::Key(self.key()?),
                        _ => Seg::Index(i),
                    };
                    path.push(seg);
                    let r = self.value(path, want, take);
                    path.pop();
                    r?;
                    self.ws()?;
                    match self.next()? {
                        b',' => {}
                        c if c == close => return Ok(()),
                        _ => return self.fail(&format!("expected `,` or `{}`", close as char)),
                    }
                }
                Ok(())
            }
        }
    }

    /// An object's key, decoded, and past its `:`.
    fn key(&mut self) -> anyhow::Result<String> {
        self.expect(b'"')?;
        let raw = self.string(true)?;
        let key = match raw.contains(&b'\\') {
            false => String::from_utf8(raw[..raw.len() - 1].to_vec())?,
            true => {
                let mut quoted = vec![b'"'];
                quoted.extend_from_slice(&raw);
                serde_json::from_slice(&quoted)?
            }
        };
        self.expect(b':')?;
        Ok(key)
    }
}

/// Where a string's plain run ends in `b`: the first `"`, `\\` or control character (below
/// 0x20), looked for eight bytes at a time (a skipped report is mostly strings).
fn first_special(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = b.chunks_exact(8);
    for (k, word) in words.by_ref().enumerate() {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let quote = w ^ (ONES * u64::from(b'"'));
        let slash = w ^ (ONES * u64::from(b'\\'));
        // the high bit of each byte that is 0 in `quote` or `slash`, or below 0x20 in `w`; a
        // borrow can mark a byte after a true one, never before, so the lowest mark is exact
        let hit = (quote.wrapping_sub(ONES) & !quote
            | slash.wrapping_sub(ONES) & !slash
            | w.wrapping_sub(ONES * 0x20) & !w)
            & HIGH;
        if hit != 0 {
            return Some(k * 8 + (hit.trailing_zeros() / 8) as usize);
        }
    }
    let tail = b.len() - words.remainder().len();
    words
        .remainder()
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| tail + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value at a path `want` takes, as (path, compact JSON), and the result.
    fn taken(text: &str, chunk: usize) -> anyhow::Result<Vec<(String, String)>> {
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut out = Vec::new();
        select(
            Trickle(text.as_bytes(), chunk),
            &mut |p| match p {
                [] => Want::Descend,
                [Seg::Key(k)] if k == "a" || k == "b\"q" => Want::Descend,
                [Seg::Key(k), Seg::Index(_)] if k == "a" => Want::Take,
                [Seg::Key(_), Seg::Key(k)] if k == "x" => Want::Take,
                _ => Want::Skip,
            },
            &mut |p, bytes| {
                let v: serde_json::Value = serde_json::from_slice(bytes)?;
                out.push((format!("{p:?}"), v.to_string()));
                Ok(())
            },
        )?;
        Ok(out)
    }

    #[test]
    fn the_chosen_values_are_taken_whole_and_the_rest_is_skipped_at_any_read_size() {
        let text = r#" {"skip": {"deep": [1, -2.5e3, "}]\"", true, null, {}]}, "a": [ {"k": "v, ]"}, 7 ,[]],
            "b\"q": {"x": {"y": [false]}, "z": 1}, "x": 3} "#;
        let want = vec![
            (
                "[Key(\"a\"), Index(0)]".to_string(),
                r#"{"k":"v, ]"}"#.to_string(),
            ),
            ("[Key(\"a\"), Index(1)]".into(), "7".into()),
            ("[Key(\"a\"), Index(2)]".into(), "[]".into()),
            (
                "[Key(\"b\\\"q\"), Key(\"x\")]".into(),
                r#"{"y":[false]}"#.into(),
            ),
        ];
        for chunk in [1, 2, 3, 7, 64, 1 << 16] {
            assert_eq!(
                taken(text, chunk).unwrap(),
                want,
                "read {chunk} bytes at a time"
            );
        }
    }

    #[test]
    fn the_end_of_a_plain_run_is_found_at_every_offset() {
        // every special byte, and bytes that are near them, at every place in a 0..40 window
        let specials = [b'"', b'\\', 0x00, 0x1f, b'\n'];
        let plain = [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xc3, 0xff, b'a'];
        for len in 0..40 {
            for at in 0..=len {
                for &sp in &specials {
                    for k in 0..plain.len() {
                        let mut b: Vec<u8> =
                            (0..len).map(|i| plain[(i * 7 + k) % plain.len()]).collect();
                        if at < len {
                            b[at] = sp;
                            // a second special after the first must not be the answer
                            if at + 3 < len {
                                b[at + 3] = b'"';
                            }
                        }
                        let want = b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
                        assert_eq!(first_special(&b), want, "{b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn malformed_documents_are_errors_wherever_the_fault_is() {
        for bad in [
            r#"{"skip": [1, 2}, "a": [1]}"#,
            r#"{"skip": tru, "a": [1]}"#,
            r#"{"skip": "open, "a": [1]}"#,
            r#"{"a": [1] "x": 2}"#,
            r#"{"a": [1]} {}"#,
            r#"{"a": [1,"#,
            "{\"skip\": \"a\u{1}b\"}",
            r#"{"skip": {"k" 1}}"#,
            r#"{"skip": {"k": 1,}}"#,
            r#"{"skip": [1,]}"#,
            r#"{"skip": {1: 2}}"#,
            r#"{"skip": {"k", 2}}"#,
            r#"{"skip": ["k": 2]}"#,
        ] {
            assert!(taken(bad, 5).is_err(), "{bad}");
        }
        let deep = format!("{{\"skip\": {}{}}}", "[".repeat(300), "]".repeat(300));
        assert!(taken(&deep, 64).is_err());
        let ok = format!("{{\"skip\": {}{}}}", "[".repeat(200), "]".repeat(200));
        assert!(taken(&ok, 64).is_ok());
    }
}
