use evalgate::errln;
use evalgate::infra::process::watchdog;
use evalgate::pipeline::sut::mapping::{probe, worker};

fn main() {
    // named now, before a rebuild or an upgrade can replace the file during the run
    let _ = evalgate::infra::own_binary::own_binary();
    // an empty EVALGATE_* variable (as a CI template leaves an unset input) means "not set"
    for (k, v) in std::env::vars_os() {
        if v.is_empty() && k.to_string_lossy().starts_with("EVALGATE_") {
            // SAFETY: single-threaded: nothing else runs before the CLI is parsed
            unsafe { std::env::remove_var(&k) };
        }
    }
    // evalgate's own helper processes: the watchdog, and the mapping probe and worker
    let first = std::env::args_os().nth(1).unwrap_or_default();
    let filter = || std::env::args().nth(2).unwrap_or_default();
    if first == watchdog::ARG {
        std::process::exit(watchdog::run());
    }
    if first == probe::ARG {
        std::process::exit(probe::run(&filter()));
    }
    if first == worker::ARG {
        std::process::exit(worker::run(&filter()));
    }
    // the job's tokens are in this process's environment: no child may read them from /proc
    evalgate::infra::process::hide_from_children();

    // a panic's message may quote input text: it leaves like every other message (err!), so
    // none of its lines can start a workflow command
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("<unnamed>");
        errln!("thread '{name}' {info}");
        let trace = std::backtrace::Backtrace::capture();
        if trace.status() == std::backtrace::BacktraceStatus::Captured {
            errln!("stack backtrace:\n{trace}");
        } else {
            errln!("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace");
        }
    }));
    watchdog::enable();
    std::process::exit(evalgate::main_with_args(std::env::args_os()));
}
