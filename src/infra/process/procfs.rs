//! The process table as `/proc` shows it: who is whose child, in which group, alive or a zombie.

use std::collections::{HashMap, VecDeque};

/// The fields of `/proc/<pid>/stat` this module uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct ProcStat {
    pub(super) pid: u32,
    pub(super) ppid: u32,
    pub(super) pgrp: u32,
    /// `Z` (zombie) or `X` (dead): no longer running, only waiting to be reaped.
    pub(super) dead: bool,
    /// Start time in clock ticks since boot; with the pid it identifies a process uniquely.
    pub(super) start: u64,
}

pub(super) fn parse_stat(s: &str) -> Option<ProcStat> {
    // "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses, so split at
    // the last ')'.
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let pid = s[..open].trim().parse().ok()?;
    let mut fields = s.get(close + 1..)?.split_ascii_whitespace();
    let state = fields.next()?; // field 3
    let ppid = fields.next()?.parse().ok()?; // field 4
    let pgrp = fields.next()?.parse().ok()?; // field 5
    let start = fields.nth(16)?.parse().ok()?; // field 22
    Some(ProcStat {
        pid,
        ppid,
        pgrp,
        dead: matches!(state, "Z" | "X" | "x"),
        start,
    })
}

pub(super) fn read_stat(pid: u32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Every process visible in `/proc`, or `None` if `/proc` cannot be read.
pub(super) fn proc_table() -> Option<Vec<ProcStat>> {
    let dir = std::fs::read_dir("/proc").ok()?;
    let table: Vec<ProcStat> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(read_stat)
        .collect();
    (!table.is_empty()).then_some(table)
}

pub(super) fn descendants_in(table: &[ProcStat], pid: u32) -> Vec<ProcStat> {
    let mut children: HashMap<u32, Vec<&ProcStat>> = HashMap::new();
    for p in table.iter().filter(|p| !p.dead && p.pid != pid) {
        children.entry(p.ppid).or_default().push(p);
    }
    let mut out = Vec::new();
    let mut queue = VecDeque::from([pid]);
    while let Some(parent) = queue.pop_front() {
        for &c in children.get(&parent).map(Vec::as_slice).unwrap_or_default() {
            out.push(*c);
            queue.push_back(c.pid);
        }
    }
    out
}

/// Pids of all live (non-zombie) descendants of `pid`, found by walking the parent links in
/// `/proc/*/stat`. Empty if `/proc` is unavailable. For tests and diagnostics.
pub fn descendants(pid: u32) -> Vec<u32> {
    proc_table()
        .map(|t| descendants_in(&t, pid).iter().map(|p| p.pid).collect())
        .unwrap_or_default()
}
