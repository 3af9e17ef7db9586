//! Output capture: the last lines of a child's stderr (and stdout unless handed to the caller),
//! read by background tasks into a bounded ring.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

use super::lock;

/// Bytes of output kept per stream (stdout, stderr) for [`Managed::log_tail`](super::Managed::log_tail).
pub(super) const LOG_CAP: usize = 64 * 1024;
/// Longer lines are split into pieces of this size.
pub(super) const MAX_LINE: usize = 4 * 1024;

pub(super) const STDOUT: usize = 0;
pub(super) const STDERR: usize = 1;

#[derive(Default)]
pub(super) struct StreamLog {
    /// Complete lines, oldest first, each with its global sequence number.
    pub(super) lines: VecDeque<(u64, String)>,
    pub(super) bytes: usize,
    /// The line being received (no newline yet) and its sequence number.
    partial: Vec<u8>,
    partial_seq: Option<u64>,
}

/// The last [`LOG_CAP`] bytes of each stream, as lines in arrival order across streams.
#[derive(Default)]
pub(super) struct LogRing {
    next_seq: u64,
    pub(super) streams: [StreamLog; 2],
    /// Readers still running: the log holds all the child wrote once none is.
    pub(super) readers: usize,
}

impl LogRing {
    pub(super) fn push(&mut self, stream: usize, mut data: &[u8]) {
        while !data.is_empty() {
            let s = &mut self.streams[stream];
            if s.partial_seq.is_none() {
                s.partial_seq = Some(self.next_seq);
                self.next_seq += 1;
            }
            let room = MAX_LINE - s.partial.len();
            // how much of `data` the line takes, whether a newline follows it, whether it ends
            let (take, newline, ends) = match data.iter().position(|&b| b == b'\n') {
                Some(i) if i <= room => (i, 1, true),
                _ if data.len() >= room => (room, 0, true),
                _ => (data.len(), 0, false),
            };
            s.partial.extend_from_slice(&data[..take]);
            data = &data[take + newline..];
            if ends {
                self.end_line(stream);
            }
        }
    }

    /// Only called with a line open (`partial_seq` set).
    fn end_line(&mut self, stream: usize) {
        let s = &mut self.streams[stream];
        let seq = s.partial_seq.take().unwrap_or_default();
        let mut line = String::from_utf8_lossy(&s.partial).into_owned();
        s.partial.clear();
        if line.ends_with('\r') {
            line.pop();
        }
        s.bytes += line.len() + 1;
        s.lines.push_back((seq, line));
        while s.bytes > LOG_CAP {
            match s.lines.pop_front() {
                Some((_, old)) => s.bytes -= old.len() + 1,
                None => break,
            }
        }
    }

    /// End of stream: keep an unterminated last line.
    pub(super) fn finish(&mut self, stream: usize) {
        if !self.streams[stream].partial.is_empty() {
            self.end_line(stream);
        }
    }

    pub(super) fn tail(&self, n: usize) -> String {
        let mut all: Vec<(u64, std::borrow::Cow<'_, str>)> = Vec::new();
        for s in &self.streams {
            let skip = s.lines.len().saturating_sub(n);
            all.extend(
                s.lines
                    .iter()
                    .skip(skip)
                    .map(|(q, l)| (*q, l.as_str().into())),
            );
            if let (Some(q), false) = (s.partial_seq, s.partial.is_empty()) {
                all.push((q, String::from_utf8_lossy(&s.partial)));
            }
        }
        all.sort_by_key(|(q, _)| *q);
        let skip = all.len().saturating_sub(n);
        let lines: Vec<&str> = all[skip..].iter().map(|(_, l)| l.as_ref()).collect();
        lines.join("\n")
    }
}

pub(super) fn spawn_reader<R>(mut reader: R, stream: usize, log: Arc<Mutex<LogRing>>)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    lock(&log).readers += 1;
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => lock(&log).push(stream, &buf[..n]),
            }
        }
        let mut log = lock(&log);
        log.finish(stream);
        log.readers -= 1;
    });
}
