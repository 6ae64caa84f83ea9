#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz in ./build-fuzz (clang++-16, AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage) and runs them on their seed corpora.
#
#   scripts/fuzz.sh [SECONDS [HARNESS...]]
#                               the campaign: each harness (default: all) for SECONDS (default
#                               600), one after the other, niced; new inputs go to
#                               build-fuzz/corpus/<harness>, findings to
#                               build-fuzz/findings/<harness>; a table at the end
#   scripts/fuzz.sh --smoke     what scripts/test.sh runs: each harness for a fixed number of
#                               executions (RATELAB_FUZZ_SMOKE_RUNS, default 20000), seed 1
#
# Exits 1 when a harness found a crash, a leak, a timeout or a broken property.
set -euo pipefail
cd "$(dirname "$0")/.."

cxx="${RATELAB_FUZZ_CXX:-clang++-16}"
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "fuzz: $cxx not found (scripts/setup-debian.sh installs clang-16)" >&2
    exit 2
fi
smoke=0
seconds=600
case "${1:-}" in
    --smoke) smoke=1 ;;
    "") ;;
    *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS [HARNESS...] | --smoke]" >&2; exit 2 ;;
    *) seconds="$1" ;;
esac

harnesses=(policy scenario access_log forwarded ip redis_url http_request rls_config import_nginx
           import_haproxy import_traefik import_kong import_envoy_local import_envoy_ratelimit)
if [ "$smoke" -eq 0 ] && [ "$#" -gt 1 ]; then
    shift
    for h in "$@"; do
        if [[ ! " ${harnesses[*]} " == *" $h "* ]]; then
            echo "fuzz: no harness '$h' (there are: ${harnesses[*]})" >&2
            exit 2
        fi
    done
    harnesses=("$@")
fi

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build-fuzz -G Ninja "${launcher[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
      -DRATELAB_SANITIZE=fuzzer-no-link,address,undefined -DRATELAB_BUILD_FUZZ=ON \
      -DRATELAB_BUILD_APP=OFF -DRATELAB_BUILD_GUI=OFF -DRATELAB_BUILD_TESTS=OFF \
      -DRATELAB_BUILD_BENCH=OFF -DRATELAB_INSTALL=OFF >/dev/null
cmake --build build-fuzz --parallel "$(nproc)" --target fuzzers

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
failed=0
summary=()
for h in "${harnesses[@]}"; do
    work="build-fuzz/corpus/$h"
    findings="build-fuzz/findings/$h"
    log="build-fuzz/logs/$h.log"
    mkdir -p "$work" "$findings" build-fuzz/logs
    args=(-artifact_prefix="$findings/" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
          -max_len=16384)
    if [ -f "tests/fuzz/dict/$h.dict" ]; then args+=(-dict="tests/fuzz/dict/$h.dict"); fi
    if [ "$smoke" -eq 1 ]; then
        # A scratch corpus, so that the smoke never grows build-fuzz/corpus, and a fixed seed,
        # so that every run of it tries the same inputs.
        scratch="$(mktemp -d)"
        args+=(-seed=1 -runs="${RATELAB_FUZZ_SMOKE_RUNS:-20000}" "$scratch" "tests/fuzz/corpus/$h")
    else
        args+=(-max_total_time="$seconds" "$work" "tests/fuzz/corpus/$h")
    fi
    start=$(date +%s)
    status=0
    nice -n 19 "build-fuzz/tests/fuzz/fuzz_$h" "${args[@]}" >"$log" 2>&1 || status=$?
    elapsed=$(( $(date +%s) - start ))
    if [ "$smoke" -eq 1 ]; then rm -rf "$scratch"; fi
    # A harness that stopped early (a finding, a bad dictionary) may print none of these.
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
    ft=$( (grep -o 'ft: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
    verdict=ok
    if [ "$status" -ne 0 ]; then
        verdict="FAILED (exit $status; see $log and $findings)"
        failed=1
        tail -40 "$log" >&2
    fi
    summary+=("$(printf '%-12s %12s execs %6s s  cov %6s  ft %7s  %s' "$h" "${runs:-?}" \
                 "$elapsed" "${cov:-?}" "${ft:-?}" "$verdict")")
done
printf 'fuzz %s\n' "${summary[@]}"
exit "$failed"
