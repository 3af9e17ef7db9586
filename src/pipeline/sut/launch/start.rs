//! Starting a proxy over replay upstreams and handing it over once its catalog is complete.

use super::prepare::{prepare, shape, system_name};
use super::ready::{Waited, wait_ready};
use super::upstreams::Quarantine;
use super::writers::Vars;
use super::{LOG_LINES, proxy_log};
use crate::infra::process::{Managed, Spec, Supervisor};
use crate::pipeline::sut::SutError;
use crate::pipeline::sut::launch::spec::LaunchSpec;
use std::collections::{BTreeMap, BTreeSet};

/// What a launch serves and waits for.
pub struct Plan {
    /// Upstream name → the arguments of evalgate's replay serving it.
    pub upstreams: BTreeMap<String, Vec<String>>,
    /// The `server:tool` ids the proxy's catalog must hold before the launch counts as ready.
    pub want: BTreeSet<String>,
    pub quarantine: Quarantine,
}

/// A proxy started over replay upstreams whose catalog has been seen complete.
pub struct Running {
    pub name: String,
    pub proxy: Managed,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub api_key: String,
    /// The MCP endpoint (`[sut.launch] url`, default `http://{listen}/mcp`).
    pub url: String,
    /// The placeholder values of this launch.
    pub vars: Vars,
    /// The scratch directory (config, data dir, replay files); removed when dropped.
    pub dir: tempfile::TempDir,
}

/// Starts an `http` proxy the settings name (`--sut mcpproxy`, `launch`, else the reference
/// proxy) over `plan.upstreams`. For mcpproxy's family it then waits until the catalog is
/// exactly `plan.want` (REST); any other proxy is waited on until it accepts connections.
///
/// The steps: prepare the scratch directory and config → spawn the proxy → wait until it is
/// ready (a proxy that lost its port to another process is started again, at most three
/// times) → hand it over as [`Running`].
pub async fn start(
    s: &LaunchSpec,
    plan: &Plan,
    dir: tempfile::TempDir,
    sup: &Supervisor,
) -> Result<Running, SutError> {
    let name = system_name(s);
    let shape = shape(s);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let p = prepare(s, plan, dir.path(), sup, &shape).await?;
        let mut spec = Spec::new(name.clone(), p.program.clone());
        spec.args = p.args.clone();
        spec.env = p.env.clone();
        spec.cwd = Some(p.cwd.clone());
        if !s.check.quiet {
            crate::errln!(
                "{name}: starting {} on {} over {} replayed server(s)",
                spec.program.display(),
                p.listen,
                plan.upstreams.len()
            );
        }
        let proxy = sup
            .spawn(spec)
            .map_err(|e| SutError::crashed(name.clone(), format!("{e:#}")))?;
        let base = format!("http://{}", p.listen);
        let took = match wait_ready(s, &name, plan, &shape, &p, &base, &proxy).await? {
            Waited::Ready(took) => took,
            // the port chosen was taken before the proxy bound it: try another one
            Waited::Exited(_) if attempt < 3 && lost_its_port(&proxy) => continue,
            Waited::Exited(status) => {
                let log = proxy_log(&proxy);
                let detail = format!("the proxy exited ({status}) before it was ready{log}");
                return Err(SutError::crashed(name, detail));
            }
        };
        if !s.check.quiet && shape.rest_ready {
            crate::errln!(
                "{name}: catalog ready ({} tools) after {:.1} s",
                plan.want.len(),
                took.as_secs_f64()
            );
        }
        return Ok(Running {
            name,
            proxy,
            base,
            api_key: p.api_key,
            url: p.vars.fill("{url}"),
            vars: p.vars,
            dir,
        });
    }
}

/// Does the exited proxy's log say it could not bind its port?
fn lost_its_port(proxy: &Managed) -> bool {
    let tail = proxy.log_tail(LOG_LINES).to_lowercase();
    tail.contains("in use") || tail.contains("cannot listen") || tail.contains("bind")
}
