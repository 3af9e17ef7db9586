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
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == evalgate::infra::process::watchdog::ARG)
    {
        std::process::exit(evalgate::infra::process::watchdog::run());
    }
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == evalgate::pipeline::sut::mapping::probe::ARG)
    {
        let filter = std::env::args().nth(2).unwrap_or_default();
        std::process::exit(evalgate::pipeline::sut::mapping::probe::run(&filter));
    }
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == evalgate::pipeline::sut::mapping::worker::ARG)
    {
        let filter = std::env::args().nth(2).unwrap_or_default();
        std::process::exit(evalgate::pipeline::sut::mapping::worker::run(&filter));
    }
    // the job's tokens are in this process's environment: no child may read them from /proc
    evalgate::infra::process::hide_from_children();

    // a panic's message may quote input text: it leaves like every other message (err!), so
    // none of its lines can start a workflow command
    std::panic::set_hook(Box::new(|info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("<unnamed>");
        evalgate::errln!("thread '{name}' {info}");
        let trace = std::backtrace::Backtrace::capture();
        if trace.status() == std::backtrace::BacktraceStatus::Captured {
            evalgate::errln!("stack backtrace:\n{trace}");
        } else {
            evalgate::errln!(
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
            );
        }
    }));
    evalgate::infra::process::watchdog::enable();
    std::process::exit(evalgate::main_with_args(std::env::args_os()));
}
