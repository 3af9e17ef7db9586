//! evalgate: measure MCP tool discovery and security detectors, gate on committed baselines.
//!
//! Data flows through the modules in this order: `dataset` → `sut` (systems under test) →
//! `observe` (what they returned) → `metrics` + `stats` (pure scoring) → `gate` (baseline
//! comparison) → `report` (one model, many renderers).

/// Writes to standard output without panicking: a closed pipe (`evalgate validate | head`)
/// ends the output quietly, any other failure (`> /dev/full`) is reported once on stderr when
/// the command ends, and the exit code stays the verdict's.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout_write(format_args!($($arg)*)) };
}

/// [`out!`] with a newline.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::stdout_write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Writes to standard error, like `eprint!`, with no line a GitHub Actions runner could take
/// for a workflow command ([`infra::text::sanitize::no_workflow_commands`]): messages quote
/// input text, line breaks and all. Every message of evalgate goes through this or [`out!`].
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => { $crate::stderr_write(format_args!($($arg)*)) };
}

/// [`err!`] with a newline.
#[macro_export]
macro_rules! errln {
    () => { $crate::err!("\n") };
    ($($arg:tt)*) => { $crate::stderr_write(format_args!("{}\n", format_args!($($arg)*))) };
}

static STDOUT_ERROR: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

/// The first failure to write standard output, if any.
fn stdout_error() -> std::sync::MutexGuard<'static, Option<std::io::Error>> {
    STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner())
}

#[doc(hidden)]
pub fn stdout_write(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    stdout_raw(&infra::text::sanitize::no_workflow_commands(&text));
}

/// Prints one of evalgate's own workflow commands (`::error title=…::…`) on standard output, as
/// it is: the only way a line starting with `::` leaves evalgate. Its values must already be
/// escaped (`pipeline::publish::runner`).
pub fn workflow_command(line: &str) {
    stdout_raw(&format!("{line}\n"));
}

fn stdout_raw(text: &str) {
    use std::io::Write;
    let mut failed = stdout_error();
    if failed.is_some() {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
        *failed = Some(e);
    }
}

#[doc(hidden)]
pub fn stderr_write(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let text = args.to_string();
    let text = infra::text::sanitize::no_workflow_commands(&text);
    let mut e = std::io::stderr().lock();
    // as `eprint!`, minus the panic: nothing is left to tell when stderr is gone
    let _ = e.write_all(text.as_bytes()).and_then(|_| e.flush());
}

/// Whether writing to standard output has failed (say, the reader closed the pipe).
pub fn stdout_failed() -> bool {
    stdout_error().is_some()
}

pub mod app;
pub mod cli;
pub mod config;
pub mod infra;
pub mod pipeline;
pub mod tools;

use app::Part;
use cli::{BaselineCommand, Command, CorpusCommand};
use pipeline::gate::ExitCode;

/// Runs the command line and returns the process exit code.
pub fn main_with_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    pipeline::sut::mapping::probe::enable();
    let cli = match cli::parse(args) {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            // a usage error quotes the argument given, which may come from anywhere
            use std::io::IsTerminal;
            let text = if std::io::stderr().is_terminal() {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            err!("{text}");
            return ExitCode::BAD_INPUT;
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::PASS;
        }
    };
    // every credential evalgate is given is masked from here on, before anything is started
    // or read: the job's tokens and credentials in the environment, and --github-token
    infra::secrets::register_environment(std::env::vars_os());
    if let Some(t) = &cli.github_token {
        infra::secrets::register(t);
    }
    infra::log::init(cli.verbose);
    infra::mcp::init_tls();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            errln!("error: cannot start the async runtime: {e}");
            return ExitCode::BAD_INPUT;
        }
    };
    let evaluates = matches!(
        cli.command,
        Command::Run(_)
            | Command::Retrieval(_)
            | Command::Security(_)
            | Command::Fitness(_)
            | Command::Baseline(_)
    );
    if evaluates {
        // orphaned grandchildren of a launched proxy are re-parented to us, so the supervisor
        // sees and reaps them (best effort: not every kernel allows it)
        let _ = infra::process::become_child_subreaper();
    }
    if evaluates || matches!(cli.command, Command::Proxy(_) | Command::Corpus(_)) {
        infra::process::watchdog::start();
    }
    let result = rt.block_on(async {
        match &cli.command {
            Command::Run(a) => app::cmd_eval(&cli.args, &a.deliver, Part::Both).await,
            Command::Retrieval(a) => app::cmd_eval(&cli.args, &a.deliver, Part::Retrieval).await,
            Command::Security(a) => app::cmd_eval(&cli.args, &a.deliver, Part::Security).await,
            Command::Fitness(a) => app::cmd_fitness(a, &cli.args).await,
            Command::Validate(_) => app::cmd_validate(&cli.args),
            Command::Card(a) => app::cmd_card(a, &cli.args),
            Command::Merge(a) => app::cmd_merge(a, &cli.args).await,
            Command::Baseline(BaselineCommand::Update(a)) => {
                app::cmd_baseline_update(a, &cli.args).await
            }
            Command::Baseline(BaselineCommand::Import(a)) => app::cmd_baseline_import(a),
            Command::Schema { out } => app::schema::write_all(out).map(|_| ExitCode::PASS),
            Command::Corpus(CorpusCommand::Snapshot(a)) => app::cmd_snapshot(a).await,
            Command::Replay(a) => app::cmd_replay(a).await,
            Command::Proxy(a) => app::cmd_proxy(a).await,
            Command::Publish(a) => app::cmd_publish(a).await,
        }
    });
    drop(rt);
    infra::process::watchdog::finish();
    // said on stderr when standard output could not be written (a closed pipe is not worth it)
    if let Some(e) = stdout_error().as_ref()
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        errln!("warning: could not write to standard output: {e}");
    }
    result.unwrap_or_else(|e| exit_of(&e))
}

/// The one place an error becomes an exit code: every error a command returns is the user's
/// input or usage (a system under test that failed is a report and its verdict, not an
/// error), shown visibly (errors quote dataset and system text, never escape sequences).
fn exit_of(e: &anyhow::Error) -> i32 {
    use infra::text::sanitize::visible_lines;
    if let Some(d) = e.downcast_ref::<pipeline::dataset::DatasetErrors>() {
        err!("{}", visible_lines(&d.to_string()));
    } else {
        // (its causes joined, any Rust type name a library put in them left out)
        errln!(
            "error: {}",
            visible_lines(&infra::secrets::scrub(&infra::mcp::readable(e.as_ref())))
        );
    }
    ExitCode::BAD_INPUT
}
