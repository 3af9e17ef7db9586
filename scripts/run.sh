#!/usr/bin/env bash
# Runs evalgate for the composite action (action.yml, step "run") and exits with its exit code
# (0 pass, 1 gate failed, 2 bad input, 3 system under test failed).
#
# Inputs (environment; action.yml maps the action inputs onto them):
#   EVALGATE_BIN          binary to run (the install step's output; default: evalgate on PATH)
#   INPUT_CONFIG          evalgate.toml path                     -> --config
#   INPUT_MCPPROXY_BIN    mcpproxy binary built earlier          -> --mcpproxy-bin
#                         empty: EVALGATE_DEFAULT_SUT=reference, so evalgate measures its own
#                         reference proxy unless the config file (or ./evalgate.toml) chooses
#                         `[sut] kind` or EVALGATE_SUT is set (evalgate reads its config; this
#                         script does not)
#   INPUT_RUNS            repetitions                            -> --runs
#   INPUT_COMMENT_KEY     sticky-comment key; empty: $GITHUB_JOB plus the matrix values
#   INPUT_ARTIFACT_NAME   artifact name; empty: evalgate-report-<comment key>
#   INPUT_REPORT_DIR      report directory (relative to the working directory; default
#                         evalgate-report)                      -> --out
#   INPUT_WORKING_DIRECTORY  directory to run in (relative to the workspace; default: here)
#   INPUT_SHARD           INDEX/COUNT: measure one shard (a matrix leg)  -> --shard
#   INPUT_MERGE           directory of the shards' downloaded report artifacts: runs
#                         `evalgate merge` over every report.json under it (sorted) instead of
#                         `run`; runs, mcpproxy-bin and shard do not apply then
#   INPUT_ARGS            extra arguments, whitespace-separated (no quoting, no expansion),
#                         appended after the ones above; their values are not echoed (a header
#                         or a URL may carry a credential)
#   EVALGATE_MATRIX_JSON  toJSON(matrix) of the calling job ("null" outside a matrix)
# Passed through untouched to evalgate (it publishes by itself under GITHUB_ACTIONS=true):
#   EVALGATE_GITHUB_TOKEN, EVALGATE_COMMENT, EVALGATE_CHECK_RUN, EVALGATE_FAIL_ON,
#   EVALGATE_ACT_POST.
#   INPUT_DATASETS, INPUT_BASELINE, INPUT_DETECTORS -> EVALGATE_DATASETS, EVALGATE_BASELINE,
#   EVALGATE_DETECTORS, exported only when the input is set: an empty input leaves a variable
#   the caller set in the step's `env:` as it is.
# Exported here: EVALGATE_COMMENT_KEY, EVALGATE_ARTIFACT_NAME, EVALGATE_DEFAULT_SUT.
# Step outputs written here: report-dir, artifact-name, comment-key (and report-json/-html/-md
# when evalgate did not write them itself). evalgate writes verdict, report-*, regressions.
# Every value written to GITHUB_OUTPUT is one line (inputs with a line break are refused), and
# every line printed keeps input text from starting a workflow command (escaped as the runner
# reads a command's message: %, CR and LF).
set -euo pipefail

# $* as one line: %, CR and LF escaped (the runner's own escaping for a command's message).
oneline() {
  local s="$*"
  s="${s//'%'/%25}"
  s="${s//$'\r'/%0D}"
  s="${s//$'\n'/%0A}"
  printf '%s' "$s"
}

say() {
  echo "evalgate action: $(oneline "$@")"
}

fail() {
  echo "::error title=evalgate::$(oneline "$@")"
  say "$@" >&2
  exit 2
}

# A value for GITHUB_OUTPUT from input `$1`: refused when it holds a line break or another
# control character (a newline in artifact-name once injected a report-dir output).
one_line_input() {
  case "$2" in
    *[[:cntrl:]]*) fail "input '$1' must be one line without control characters, got '$2'" ;;
  esac
}

# Appends `name=value` to GITHUB_OUTPUT; the value must be one line.
set_output() {
  case "$2" in
    *$'\n'* | *$'\r'*) fail "step output '$1' cannot hold a line break" ;;
  esac
  printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
}

# Lower-case, [a-z0-9._-] only, dashes squeezed, bounded length (stable across runs).
slug() {
  local s
  s="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9._-' '-' | tr -s '-')"
  s="${s#-}"
  s="${s%-}"
  if [ "${#s}" -gt 80 ]; then
    local h
    if command -v sha256sum >/dev/null 2>&1; then
      h="$(printf '%s' "$1" | sha256sum | cut -c1-8)"
    else
      h="$(printf '%s' "$1" | shasum -a 256 | cut -c1-8)"
    fi
    s="${s:0:71}-$h"
  fi
  printf '%s' "$s"
}

bin="${EVALGATE_BIN:-}"
if [ -z "$bin" ]; then bin=evalgate; fi

workdir="${INPUT_WORKING_DIRECTORY:-}"
if [ -n "$workdir" ]; then
  cd -- "$workdir" 2>/dev/null || fail "input 'working-directory' must be a directory, got '${workdir}'"
  say "running in $(pwd)"
fi

merge="${INPUT_MERGE:-}"
shard="${INPUT_SHARD:-}"
runs="${INPUT_RUNS:-}"
proxy="${INPUT_MCPPROXY_BIN:-}"
config="${INPUT_CONFIG:-}"
if [ -n "$merge" ]; then
  # the shards measured; merging measures nothing, so the measuring inputs cannot apply
  for input in shard runs mcpproxy-bin; do
    var="INPUT_$(printf '%s' "$input" | tr 'a-z-' 'A-Z_')"
    if [ -n "${!var:-}" ]; then
      fail "input '$input' does not apply with 'merge' (the shards measured; set it on the shard jobs)"
    fi
  done
  [ -d "$merge" ] || fail "input 'merge' must be the directory the shards' report artifacts were downloaded to, got '${merge}'"
  args=(merge)
  if [ -n "$config" ]; then
    args+=(--config "$config")
  fi
else
  args=(run)
  if [ -n "$config" ]; then
    args+=(--config "$config")
  fi
  if [ -n "$runs" ]; then
    [[ "$runs" =~ ^[0-9]+$ ]] || fail "input 'runs' must be a whole number, got '${runs}'"
    args+=(--runs "$runs")
  fi
  if [ -n "$shard" ]; then
    [[ "$shard" =~ ^[0-9]+/[0-9]+$ ]] || fail "input 'shard' must be INDEX/COUNT (e.g. 2/4), got '${shard}'"
    args+=(--shard "$shard")
  fi
  if [ -n "$proxy" ]; then
    args+=(--mcpproxy-bin "$proxy")
  else
    # evalgate reads its own config: the reference proxy is the default only when neither
    # the config's [sut] kind nor EVALGATE_SUT chooses the system under test
    export EVALGATE_DEFAULT_SUT=reference
  fi
fi

key="${INPUT_COMMENT_KEY:-}"
if [ -z "$key" ]; then
  key="${GITHUB_JOB:-evalgate}"
  matrix="${EVALGATE_MATRIX_JSON:-}"
  # Values only ("os": "ubuntu" -> ubuntu): the key must not change when a matrix grows a
  # dimension name, only when the leg changes.
  matrix_values="$(printf '%s' "$matrix" | sed -E 's/"[^"]*"[[:space:]]*:[[:space:]]*//g')"
  matrix_values="$(slug "$matrix_values")"
  case "$matrix_values" in
    "" | null) ;;
    *) key="$key-$matrix_values" ;;
  esac
fi
key="$(slug "$key")"
[ -n "$key" ] || key=evalgate

artifact="${INPUT_ARTIFACT_NAME:-}"
if [ -z "$artifact" ]; then
  artifact="evalgate-report-$key"
fi
one_line_input artifact-name "$artifact"
# upload-artifact rejects these characters in a name.
if [[ "$artifact" == *[\":\<\>\|\*\?\\/]* ]]; then
  fail "input 'artifact-name' must not contain any of \" : < > | * ? \\ /, got '${artifact}'"
fi

out="${INPUT_REPORT_DIR:-}"
if [ -z "$out" ]; then out=evalgate-report; fi
one_line_input report-dir "$out"
case "$out" in
  /*) ;;
  *) out="$PWD/$out" ;;
esac
mkdir -p "$out" || fail "cannot create the report directory ${out}"
args+=(--out "$out")

# An input set to '' (e.g. from an empty matrix value) means "evalgate's default": evalgate
# (clap) rejects an empty value, so such variables are removed rather than passed on empty.
for v in EVALGATE_GITHUB_TOKEN EVALGATE_COMMENT EVALGATE_CHECK_RUN EVALGATE_FAIL_ON EVALGATE_ACT_POST; do
  if [ -z "${!v:-}" ]; then unset "$v"; fi
done
if [ -n "${INPUT_DATASETS:-}" ]; then export EVALGATE_DATASETS="$INPUT_DATASETS"; fi
if [ -n "${INPUT_BASELINE:-}" ]; then export EVALGATE_BASELINE="$INPUT_BASELINE"; fi
if [ -n "${INPUT_DETECTORS:-}" ]; then export EVALGATE_DETECTORS="$INPUT_DETECTORS"; fi

export EVALGATE_COMMENT_KEY="$key"
export EVALGATE_ARTIFACT_NAME="$artifact"

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  set_output report-dir "$out"
  set_output artifact-name "$artifact"
  set_output comment-key "$key"
fi

# Extra arguments: split on whitespace only (read -a does no quote removal, no globbing and no
# expansion), so an input can never run anything.
extra_input="${INPUT_ARGS:-}"
shown="${args[*]}"
if [ -n "$extra_input" ]; then
  read -r -a extra <<<"${extra_input//$'\n'/ }"
  args+=("${extra[@]}")
  # shown as flag names only: a value may be a credential (a header, a URL with a key), and
  # this line is printed before anything could mask it
  for a in "${extra[@]}"; do
    case "$a" in
      --*=*) shown+=" ${a%%=*}=***" ;;
      -*) shown+=" $a" ;;
      *) shown+=" ***" ;;
    esac
  done
fi

if [ -n "$merge" ]; then
  # every shard's report.json under the directory, in a stable order (merge sorts by shard)
  shard_reports=()
  while IFS= read -r -d '' f; do
    shard_reports+=("$f")
  done < <(find "$merge" -name report.json -type f -print0 | sort -z)
  [ "${#shard_reports[@]}" -gt 0 ] || fail "input 'merge': no report.json under '${merge}' (download the shards' report artifacts there first)"
  args+=("${shard_reports[@]}")
  shown+=" ${shard_reports[*]}"
fi

say "$bin $shown"
code=0
"$bin" "${args[@]}" || code=$?

# Report paths for older evalgate builds that do not write step outputs themselves.
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  for kind in json html md; do
    if [ -f "$out/report.$kind" ] && ! grep -Eq "^report-$kind(=|<<)" "$GITHUB_OUTPUT"; then
      set_output "report-$kind" "$out/report.$kind"
    fi
  done
fi

exit "$code"
