//! The supervisor against real process trees (`/bin/sh`, `sleep`, `setsid`).

use super::child::KILL_WAIT;
use super::log::{LOG_CAP, LogRing, MAX_LINE, STDERR, STDOUT};
use super::procfs::{parse_stat, read_stat};
use super::*;
use nix::sys::signal::Signal;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const HELPER_ENV: &str = "EVALGATE_PROCESS_SIGNAL_HELPER";

fn init() {
    // Orphaned grandchildren must come back to us to be reaped: PID 1 may never reap.
    become_child_subreaper().expect("PR_SET_CHILD_SUBREAPER");
}

fn sh(name: &str, script: &str) -> Spec {
    Spec {
        args: vec!["-c".into(), script.into()],
        ..Spec::new(name, "/bin/sh")
    }
}

/// Running (not a zombie) and present in /proc.
fn running(pid: u32) -> bool {
    read_stat(pid).is_some_and(|p| !p.dead)
}

fn gone(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

async fn eventually(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait_for_line(m: &Managed, line: &str) {
    let what = format!("pid {} to print {line:?}", m.slot.pid);
    eventually(&what, Duration::from_secs(10), || {
        m.log_tail(1000).lines().any(|l| l == line)
    })
    .await;
}

/// Waits until `pid` has `n` live descendants and returns them.
async fn wait_descendants(pid: u32, n: usize) -> Vec<u32> {
    let mut found = Vec::new();
    eventually("grandchildren to start", Duration::from_secs(10), || {
        found = descendants(pid);
        found.len() >= n
    })
    .await;
    found
}

#[test]
fn parse_stat_handles_odd_command_names() {
    let line = "4242 (we ird) (x)) S 1 4240 4240 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
    let p = parse_stat(line).unwrap();
    assert_eq!(
        (p.pid, p.ppid, p.pgrp, p.dead, p.start),
        (4242, 1, 4240, false, 987654)
    );
    let z = parse_stat(&line.replace(") S ", ") Z ")).unwrap();
    assert!(z.dead);
    assert!(parse_stat("garbage").is_none());
}

#[test]
fn log_ring_is_bounded_keeps_order_and_partial_lines() {
    let mut ring = LogRing::default();
    ring.push(STDERR, b"e1\ne2\n");
    ring.push(STDOUT, b"o1\n");
    ring.push(STDERR, b"e3 no newline yet");
    assert_eq!(ring.tail(3), "e2\no1\ne3 no newline yet");
    ring.push(STDERR, b" done\r\n");
    assert_eq!(ring.tail(1), "e3 no newline yet done");

    for i in 0..20_000 {
        ring.push(STDERR, format!("noise line {i}\n").as_bytes());
    }
    let s = &ring.streams[STDERR];
    assert!(s.bytes <= LOG_CAP, "{} bytes kept", s.bytes);
    assert_eq!(ring.tail(2), "noise line 19998\nnoise line 19999");
    assert_eq!(
        ring.streams[STDOUT].lines.len(),
        1,
        "stdout budget is separate"
    );

    ring.push(STDOUT, &vec![b'x'; MAX_LINE * 2 + 10]);
    ring.finish(STDOUT);
    let tail = ring.tail(3);
    let lens: Vec<usize> = tail.lines().map(str::len).collect();
    assert_eq!(lens, vec![MAX_LINE, MAX_LINE, 10]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_grandchildren() {
    init();
    let sup = Supervisor::new();
    let m = sup
        .spawn(sh("tree", "sleep 300 & sleep 300 & wait"))
        .unwrap();
    let grandkids = wait_descendants(m.slot.pid, 2).await;
    let mut all = grandkids.clone();
    all.push(m.slot.pid);
    let mine = descendants(std::process::id());
    assert!(
        all.iter().all(|p| mine.contains(p)),
        "{all:?} not in {mine:?}"
    );

    sup.shutdown(Duration::from_secs(2)).await;

    let mine = descendants(std::process::id());
    assert!(
        all.iter().all(|p| !mine.contains(p)),
        "{all:?} still in {mine:?}"
    );
    // Reaped right away, not just dead: nothing left in /proc.
    for p in &all {
        assert!(gone(*p), "/proc/{p} still exists: {:?}", read_stat(*p));
    }
    assert!(
        m.try_exited().unwrap().contains("SIGTERM"),
        "{:?}",
        m.try_exited()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descendant_that_left_the_group_is_killed_too() {
    init();
    let sup = Supervisor::new();
    let m = sup
        .spawn(sh("escaper", "setsid sleep 300 & sleep 300 & wait"))
        .unwrap();
    let mut kids = Vec::new();
    eventually(
        "a grandchild to leave the group",
        Duration::from_secs(10),
        || {
            kids = descendants(m.slot.pid);
            let out = kids
                .iter()
                .filter(|p| read_stat(**p).is_some_and(|s| s.pgrp != m.slot.pid));
            kids.len() == 2 && out.count() == 1
        },
    )
    .await;

    sup.shutdown(Duration::from_secs(2)).await;
    for p in kids.iter().chain([&m.slot.pid]) {
        assert!(gone(*p), "/proc/{p} still exists: {:?}", read_stat(*p));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_ignoring_sigterm_is_killed_after_grace() {
    init();
    let sup = Supervisor::new();
    let m = sup
        .spawn(sh(
            "stubborn",
            r#"trap "" TERM; sleep 300 & echo ready; wait"#,
        ))
        .unwrap();
    wait_for_line(&m, "ready").await;
    let grandkids = wait_descendants(m.slot.pid, 1).await;

    let grace = Duration::from_millis(400);
    let started = Instant::now();
    m.terminate(grace).await;
    let took = started.elapsed();

    assert!(
        took >= grace,
        "TERM was not ignored? stopped after {took:?}"
    );
    assert!(took < grace + KILL_WAIT, "took {took:?}");
    assert_eq!(m.try_exited().as_deref(), Some("signal: 9 (SIGKILL)"));
    for p in grandkids.iter().chain([&m.slot.pid]) {
        assert!(gone(*p), "/proc/{p} still exists: {:?}", read_stat(*p));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_supervisor_kills_its_children() {
    init();
    let sup = Supervisor::new();
    let clone = sup.clone();
    let m = sup.spawn(sh("dropped", "sleep 300 & wait")).unwrap();
    let mut pids = wait_descendants(m.slot.pid, 1).await;
    pids.push(m.slot.pid);

    drop(sup);
    assert!(pids.iter().all(|p| running(*p)), "a clone still owns them");
    drop(clone);

    for p in &pids {
        assert!(!running(*p), "{p} survived the drop");
    }
    eventually(
        "the drop to reap everything",
        Duration::from_secs(2),
        || pids.iter().all(|p| gone(*p)),
    )
    .await;
    assert_eq!(m.try_exited().as_deref(), Some("signal: 9 (SIGKILL)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_kills_the_children() {
    init();
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = std::sync::mpsc::channel();
    let outcome = std::thread::spawn(move || {
        let _rt = handle.enter();
        let sup = Supervisor::new();
        let m = sup.spawn(sh("panicky", "sleep 300 & wait")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut pids = descendants(m.slot.pid);
        while pids.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            pids = descendants(m.slot.pid);
        }
        pids.push(m.slot.pid);
        tx.send(pids).unwrap();
        panic!("deliberate panic while children run");
    })
    .join();
    assert!(outcome.is_err());
    let pids = rx.recv().unwrap();
    assert_eq!(pids.len(), 2, "{pids:?}");
    for p in &pids {
        assert!(!running(*p), "{p} survived the panic");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashed_child_reports_exit_code_and_log_tail() {
    init();
    let sup = Supervisor::new();
    let m = sup
        .spawn(sh(
            "crasher",
            // The pipes are read independently: the pause makes the cross-stream order
            // deterministic for the last assertion.
            "echo to-stdout; sleep 0.2; for i in 1 2 3 4 5; do echo line$i >&2; done; exit 3",
        ))
        .unwrap();
    let exit = m.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(exit.as_deref(), Some("exit status: 3"));
    assert_eq!(m.try_exited().as_deref(), Some("exit status: 3"));
    assert_eq!(m.try_exit_status().and_then(|s| s.code()), Some(3));
    assert_eq!(m.log_tail(2), "line4\nline5");
    assert_eq!(m.log_tail(100).lines().next(), Some("to-stdout"));

    let segv = sup.spawn(sh("segv", "kill -SEGV $$")).unwrap();
    let exit = segv.wait_exit(Duration::from_secs(10)).await.unwrap();
    assert!(exit.starts_with("signal: 11 (SIGSEGV)"), "{exit}");

    let live = sup.spawn(sh("live", "sleep 300")).unwrap();
    assert_eq!(live.try_exited(), None);
    assert_eq!(live.wait_exit(Duration::from_millis(50)).await, None);
    let quick = sup.spawn(sh("quick", "exit 0")).unwrap();
    let exit = quick.wait_exit(Duration::MAX).await;
    assert_eq!(exit.as_deref(), Some("exit status: 0"));
}

/// A relative program with a directory part (`bin/mcpproxy`) is found from evalgate's own
/// directory, not from the child's working directory (a launch runs in its scratch directory).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_program_is_found_from_evalgates_directory() {
    init();
    let dir = tempfile::Builder::new()
        .prefix(".evalgate-test-")
        .tempdir_in(".")
        .unwrap();
    let prog = Path::new(dir.path().file_name().unwrap()).join("prog.sh");
    std::fs::write(&prog, "#!/bin/sh\necho started\n").unwrap();
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert!(prog.is_relative(), "{}", prog.display());
    let elsewhere = tempfile::tempdir().unwrap();
    let sup = Supervisor::new();
    let m = sup
        .spawn(Spec {
            cwd: Some(elsewhere.path().to_path_buf()),
            ..Spec::new("relative", &prog)
        })
        .unwrap();
    let exit = m.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(exit.as_deref(), Some("exit status: 0"), "{}", m.log_tail(5));
    assert_eq!(m.log_tail(1), "started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_stdio_talks_to_the_child() {
    init();
    let sup = Supervisor::new();
    let m = sup
        .spawn(Spec {
            stdio: true,
            ..Spec::new("cat", "cat")
        })
        .unwrap();
    let (mut stdin, stdout) = m.take_stdio().expect("pipes");
    assert!(m.take_stdio().is_none(), "pipes can be taken once");
    let mut lines = BufReader::new(stdout).lines();
    for word in ["hello", "world"] {
        stdin
            .write_all(format!("{word}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        let echoed = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("echo in time")
            .unwrap();
        assert_eq!(echoed.as_deref(), Some(word));
    }
    drop(stdin);
    let exit = m.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(exit.as_deref(), Some("exit status: 0"));

    let captured = sup.spawn(Spec::new("echo", "echo")).unwrap();
    assert!(captured.take_stdio().is_none(), "stdout was not requested");
    let err = sup
        .spawn(Spec::new("missing", "/nonexistent/program"))
        .err()
        .expect("a missing program does not start");
    assert!(
        format!("{err:#}").contains("cannot start missing"),
        "{err:#}"
    );
}

/// Runs only when re-executed by `signal_handler_kills_children_and_exits` below.
#[test]
fn signal_helper() {
    if std::env::var_os(HELPER_ENV).is_none() {
        return;
    }
    init();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let sup = Supervisor::new();
        let m = sup
            .spawn(sh("victim", "sleep 300 & sleep 300 & wait"))
            .unwrap();
        let mut pids = wait_descendants(m.slot.pid, 2).await;
        pids.push(m.slot.pid);
        sup.install_signal_handlers();
        let list: Vec<String> = pids.iter().map(u32::to_string).collect();
        println!("PIDS {}", list.join(" "));
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signal_handler_kills_children_and_exits() {
    init();
    let exe = std::env::current_exe().unwrap();
    // the helper test's name as the test harness knows it (the path without the crate's name)
    let helper_test = format!(
        "{}::signal_helper",
        module_path!().split_once("::").map_or("", |(_, m)| m)
    );
    for (sig, code) in [(Signal::SIGTERM, 143), (Signal::SIGINT, 130)] {
        let sup = Supervisor::new();
        let helper = sup
            .spawn(Spec {
                args: vec!["--exact".into(), helper_test.clone(), "--nocapture".into()],
                env: vec![(HELPER_ENV.into(), "1".into())],
                stdio: true,
                ..Spec::new("signal helper", &exe)
            })
            .unwrap();
        let (_stdin, stdout) = helper.take_stdio().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let pids: Vec<u32> = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(rest) = line.strip_prefix("PIDS ") {
                    return rest.split(' ').map(|p| p.parse().unwrap()).collect();
                }
            }
            panic!("helper ended early: {}", helper.log_tail(20));
        })
        .await
        .expect("helper to start");
        assert_eq!(pids.len(), 3);
        assert!(pids.iter().all(|p| running(*p)));

        sys::signal_pid(helper.slot.pid, Some(sig)).unwrap();
        let exit = helper.wait_exit(Duration::from_secs(20)).await;
        assert_eq!(
            helper.try_exit_status().and_then(|s| s.code()),
            Some(code),
            "{exit:?}; {}",
            helper.log_tail(20)
        );
        assert!(helper.log_tail(5).contains("child processes stopped"));
        for p in &pids {
            assert!(!running(*p), "{p} survived the helper's signal handler");
        }
    }
}
