//! What a child's environment holds (SECURITY.md, "The children's environment"): the variables
//! programs need to run, taken from evalgate's environment by an allow-list; never one whose
//! name marks a credential or whose value is a URL carrying a password; then what the
//! configuration names for that child ([`super::Spec::env`]), which wins.
//!
//! The children are code from the pull request (a system under test, a scanner) and the job's
//! environment holds its tokens (`GITHUB_TOKEN`, `ACTIONS_RUNTIME_TOKEN`, ...): an allow-list
//! keeps a variable nobody thought of out, where a deny-list would let it through.

use crate::infra::secrets::names_credential;
use std::ffi::OsString;

/// Passed on by exact name.
const NAMES: &[&str] = &[
    // the basics
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "TERM",
    "NO_COLOR",
    "CI",
    // network: the runner's proxy and certificate authorities
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    // toolchains the children run through: npx/node, uvx/python, go, cargo, java, dotnet
    "NODE_OPTIONS",
    "NODE_PATH",
    "NVM_DIR",
    "COREPACK_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYENV_ROOT",
    "pythonLocation",
    "Python_ROOT_DIR",
    "Python3_ROOT_DIR",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "GOFLAGS",
    "GOPROXY",
    "GOTOOLCHAIN",
    "GOMAXPROCS",
    "GOMEMLIMIT",
    "GODEBUG",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "JAVA_HOME",
    "DOTNET_ROOT",
    "DOCKER_HOST",
    "LD_LIBRARY_PATH",
    "PKG_CONFIG_PATH",
    // test-only settings read by evalgate's own children (the reference proxy, the replay
    // servers); a shipped build neither reads nor passes them
    #[cfg(feature = "fault-injection")]
    "EVALGATE_PROXY_FAULT",
    #[cfg(feature = "fault-injection")]
    "EVALGATE_REPLAY_FAULT",
];

/// Passed on by prefix.
const PREFIXES: &[&str] = &[
    "LC_",
    "XDG_",
    "npm_config_",
    "PYTHON",
    "UV_",
    "PIP_",
    "PIPX_",
];

/// Whether a value is a URL carrying a password (`http://user:pass@proxy:3128`).
fn carries_password(value: &str) -> bool {
    let Some((_, rest)) = value.split_once("://") else {
        return false;
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    authority
        .rfind('@')
        .is_some_and(|at| authority[..at].contains(':'))
}

/// The part of `vars` (evalgate's environment) a child may see.
pub fn inherited(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.filter(|(k, v)| {
        let Some(k) = k.to_str() else { return false };
        let allowed = NAMES.contains(&k) || PREFIXES.iter().any(|p| k.starts_with(p));
        allowed && !names_credential(k) && !carries_password(&v.to_string_lossy())
    })
    .collect()
}

/// The environment a child starts with before its own settings: [`inherited`] from evalgate's.
pub fn for_child() -> Vec<(OsString, OsString)> {
    inherited(std::env::vars_os())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(vars: &[(&str, &str)]) -> Vec<String> {
        inherited(
            vars.iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        )
        .into_iter()
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect()
    }

    #[test]
    fn the_allow_list_passes_what_programs_need_and_no_credential() {
        let got = pass(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/r"),
            ("LC_ALL", "C"),
            ("npm_config_cache", "/c"),
            ("UV_CACHE_DIR", "/u"),
            ("GITHUB_TOKEN", "ghs_x"),
            ("EVALGATE_GITHUB_TOKEN", "ghs_x"),
            ("ACTIONS_RUNTIME_TOKEN", "x"),
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "x"),
            ("RUNNER_TEMP", "/t"),
            ("GITHUB_WORKSPACE", "/w"),
            ("EVALGATE_DATASETS", "/d"),
            ("UNRELATED", "x"),
            ("npm_config__authToken", "x"),
            ("UV_INDEX_PRIVATE_PASSWORD", "x"),
            ("PIP_INDEX_URL", "https://u:pw@pypi.example/simple"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("https_proxy", "http://u:pw@proxy:3128"),
        ]);
        assert_eq!(
            got,
            [
                "PATH",
                "HOME",
                "LC_ALL",
                "npm_config_cache",
                "UV_CACHE_DIR",
                "HTTPS_PROXY"
            ]
        );
    }
}
