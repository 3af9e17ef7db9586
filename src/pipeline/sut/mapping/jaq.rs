//! jaq, the jq engine: compiling a filter (with readable diagnostics) and running it on JSON.

use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Compiler, Ctx, Native, RcIter};
use jaq_json::Val;
use serde_json::Value;

/// A compiled filter.
pub(super) type Filter = jaq_core::Filter<Native<Val>>;

/// jaq-std's filters with an effect beyond the value they map: reading evalgate's environment
/// (`env`, where the job's tokens are), ending evalgate (`halt` exits 0, a gate passed
/// unmeasured; `halt_error` also prints) and printing to stderr (`stderr`, `debug`). A filter
/// comes from evalgate.toml, so from the pull request (SECURITY.md): these do not exist for it.
const WITHHELD: &[&str] = &["env", "halt", "halt_error", "stderr", "debug"];

/// Compiles `code` with jaq-std's and jaq-json's definitions, minus [`WITHHELD`]; `Err` is
/// jaq's diagnostics as one line.
pub(super) fn compile(code: &str) -> Result<Filter, String> {
    let arena = Arena::default();
    let std_defs = jaq_std::defs().filter(|d| !WITHHELD.contains(&d.name));
    let loader = Loader::new(std_defs.chain(jaq_json::defs()));
    let modules = loader
        .load(&arena, File { code, path: () })
        .map_err(|errs| load_errors_message(code, errs))?;
    let funs = jaq_std::funs().filter(|f| !WITHHELD.contains(&f.0));
    let compiler = Compiler::default().with_funs(funs.chain(jaq_json::funs()));
    compiler.compile(modules).map_err(compile_errors_message)
}

/// Runs `filter` on `payload`, collecting its outputs as JSON; a filter yielding more than `max`
/// outputs is stopped there. `Err` is jaq's error, or the runaway.
pub(super) fn run(filter: &Filter, payload: &Value, max: usize) -> Result<Vec<Value>, String> {
    let inputs = RcIter::new(core::iter::empty());
    let outputs = filter.run((Ctx::new([], &inputs), Val::from(payload.clone())));
    let mut values = Vec::new();
    for output in outputs {
        let val = output.map_err(|e| e.to_string())?;
        if values.len() == max {
            return Err(format!("the filter yields more than {max} results"));
        }
        values.push(val_to_json(&val));
    }
    Ok(values)
}

/// jaq value → JSON, without panicking on numbers serde_json cannot represent (those become
/// their decimal text; non-finite floats become null, as jaq prints them).
fn val_to_json(v: &Val) -> Value {
    match v {
        Val::Null => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Int(i) => Value::from(*i as i64),
        Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Val::Num(n) => n
            .parse::<serde_json::Number>()
            .map_or_else(|_| Value::String(n.to_string()), Value::Number),
        Val::Str(s) => Value::String(s.to_string()),
        Val::Arr(items) => Value::Array(items.iter().map(val_to_json).collect()),
        Val::Obj(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.to_string(), val_to_json(v)))
                .collect(),
        ),
    }
}

/// jaq's lexer/parser/loader diagnostics as one line.
fn load_errors_message(code: &str, errs: load::Errors<&str, ()>) -> String {
    let mut parts = Vec::new();
    for (_file, err) in errs {
        match err {
            load::Error::Io(errs) => {
                for (path, msg) in errs {
                    parts.push(format!("cannot load module {path:?}: {msg}"));
                }
            }
            load::Error::Lex(errs) => {
                for (expected, rest) in errs {
                    let expected = lex_expectation(&expected);
                    parts.push(match offset(code, rest) {
                        Some(at) if at < code.len() => {
                            format!("expected {expected} at offset {at}")
                        }
                        _ => format!("expected {expected} at end of input"),
                    });
                }
            }
            load::Error::Parse(errs) => {
                for (expected, found) in errs {
                    let expected = expected.as_str();
                    parts.push(match offset(code, found) {
                        _ if found.is_empty() => format!("expected {expected}, found end of input"),
                        Some(at) => format!("expected {expected}, found {found:?} at offset {at}"),
                        None => format!("expected {expected}, found {found:?}"),
                    });
                }
            }
        }
    }
    one_line(parts, "load")
}

/// jaq's compile diagnostics (undefined names) as one line.
fn compile_errors_message(errs: jaq_core::compile::Errors<&str, ()>) -> String {
    let parts: Vec<String> = errs
        .into_iter()
        .flat_map(|(_file, errs)| errs)
        .map(|(name, undefined)| match undefined {
            jaq_core::compile::Undefined::Filter(arity) => {
                format!("undefined filter `{name}/{arity}`")
            }
            other => format!("undefined {} `{name}`", other.as_str()),
        })
        .collect();
    one_line(parts, "compile")
}

/// Diagnostics joined by `; `, or an unknown error of `stage` when jaq gave none.
fn one_line(parts: Vec<String>, stage: &str) -> String {
    if parts.is_empty() {
        return format!("unknown {stage} error");
    }
    parts.join("; ")
}

/// What the lexer expected (jaq's own `as_str` panics on delimiters it does not know).
fn lex_expectation(e: &load::lex::Expect<&str>) -> String {
    use load::lex::Expect;
    match e {
        Expect::Digit => "digit".into(),
        Expect::Ident => "identifier".into(),
        Expect::Delim("(") => "closing parenthesis".into(),
        Expect::Delim("[") => "closing bracket".into(),
        Expect::Delim("{") => "closing brace".into(),
        Expect::Delim("\"") => "closing quote".into(),
        Expect::Delim(open) => format!("closing delimiter for {open:?}"),
        Expect::Escape => "string escape sequence".into(),
        Expect::Unicode => "4-digit hexadecimal code point".into(),
        Expect::Token => "token".into(),
        _ => "something else".into(),
    }
}

/// Where `part` starts in `whole`, if it is a slice of it.
fn offset(whole: &str, part: &str) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then_some(start)
}
