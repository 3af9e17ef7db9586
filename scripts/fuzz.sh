#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time and exits non-zero if any crashed.
#
#   scripts/fuzz.sh [SECONDS]        # default 60 s per target
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# Each target runs as
#   cargo +nightly fuzz run <target> fuzz/corpus/<target> fuzz/seeds/<target> -- -max_total_time=N
# libFuzzer adds the inputs it finds to the first directory (fuzz/corpus/, git-ignored), so the
# committed seeds in fuzz/seeds/ stay as they are. A crashing input is saved under
# fuzz/artifacts/<target>/ (git-ignored); replay it with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/crash-...
#
# Environment:
#   FUZZ_TARGETS     targets to run (default: every target, `cargo fuzz list`)
#   FUZZ_TOOLCHAIN   toolchain (default: nightly)
#   FUZZ_SANITIZER   address | none ... (default: none; the code under test is safe Rust, so
#                    coverage-guided speed matters more than ASan here)
#   FUZZ_BUILD       release | dev (default: release; .ci/run's short smoke run uses dev, which
#                    builds in a fraction of the time and runs slower)
#
# The targets' bodies live in fuzz/src/<target>.rs; tests/fuzz_replay.rs runs them over the
# committed seeds on stable in every `cargo nextest run`, so a toolchain without nightly still
# checks that the targets build and that their oracles hold on the seeds. No known issue is
# tolerated: a green run means every invariant in fuzz/README.md held.
set -euo pipefail

secs="${1:-60}"
case "$secs" in
  # libFuzzer reads -max_total_time=0 as "no limit": a bounded run needs at least 1 s
  '' | *[!0-9]* | 0 | 00*) echo "usage: $0 [SECONDS]: a whole number of seconds, at least 1" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

toolchain="${FUZZ_TOOLCHAIN:-nightly}"
sanitizer="${FUZZ_SANITIZER:-none}"
if ! cargo "+$toolchain" fuzz --version >/dev/null 2>&1; then
  echo "error: cargo-fuzz or the $toolchain toolchain is missing:" >&2
  echo "  rustup toolchain install $toolchain && cargo install cargo-fuzz --locked" >&2
  exit 2
fi

# -a: debug assertions (overflow checks) on; the same flags for build and run, so no rebuild
flags=(--sanitizer "$sanitizer" --debug-assertions)
case "${FUZZ_BUILD:-release}" in
  release) ;;
  dev) flags+=(--dev) ;;
  *) echo "FUZZ_BUILD must be release or dev" >&2; exit 2 ;;
esac
read -r -a targets <<<"${FUZZ_TARGETS:-$(cargo "+$toolchain" fuzz list | tr '\n' ' ')}"

echo "building ${#targets[@]} fuzz target(s) with $toolchain ($(cargo "+$toolchain" fuzz --version))"
cargo "+$toolchain" fuzz build "${flags[@]}"

# scratch files of the dataset target (the fuzzed dataset files): on a tmpfs when there is one
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  scratch="$(mktemp -d /dev/shm/evalgate-fuzz.XXXXXX)"
else
  scratch="$(mktemp -d "$root/fuzz/target/tmp.XXXXXX")"
fi
trap 'rm -rf "$scratch"' EXIT

failed=()
summary=()
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/seeds/$t"
  log="fuzz/target/fuzz-$t.log"
  echo "=== $t: ${secs}s (log: $log)"
  set +e
  EVALGATE_FUZZ_TMP="$scratch" cargo "+$toolchain" fuzz run "${flags[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$secs" -timeout=30 -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  # after a crash libFuzzer prints no final stats: take the last status line's count instead
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n1 || true)"
  [ -n "$execs" ] || execs="$(grep -Eo '^#[0-9]+' "$log" | tail -n1 | tr -d '#' || true)"
  cov="$(grep -Eo 'cov: [0-9]+' "$log" | tail -n1 | grep -o '[0-9]*' || true)"
  if [ "$rc" -eq 0 ]; then
    summary+=("$(printf '%-18s ok     %10s execs in %ss, cov %s' "$t" "${execs:-?}" "$secs" "${cov:-?}")")
  else
    failed+=("$t")
    summary+=("$(printf '%-18s FAILED %10s execs (exit %s), see %s' "$t" "${execs:-?}" "$rc" "$log")")
    # the crash report and the reproduction command
    grep -E -A40 'panicked at|ERROR: libFuzzer|SUMMARY|deadly signal|Test unit written' "$log" | head -n 80 || true
  fi
done

echo
echo "fuzz summary (${secs}s per target):"
printf '  %s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "crashes in: ${failed[*]} (inputs under fuzz/artifacts/)" >&2
  exit 1
fi
