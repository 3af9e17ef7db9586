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
    // the job's tokens are in this process's environment: no child may read them from /proc
    evalgate::infra::process::hide_from_children();
    evalgate::infra::process::watchdog::enable();
    std::process::exit(evalgate::main_with_args(std::env::args_os()));
}
