#!/usr/bin/env bash
# Installs what ratelab needs, builds it and runs every test: the Release build's whole CTest
# suite (labels engine, identity, policy, sim, redis, gui, serve), then the engine, identity,
# policy, simulator and serve suites again under AddressSanitizer and UndefinedBehaviorSanitizer,
# then the suites that run threads under ThreadSanitizer (neither runs the GUI suites or those
# labelled "timing", which assert wall-clock bounds a sanitizer's slowdown would distort), then a fixed-length smoke of
# every libFuzzer harness (scripts/fuzz.sh --smoke; the set-up installs clang-16 for it). The
# tests start their own redis-server, nginx and HAProxy on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
scripts/build.sh
# Label "heavy": suites of minutes each (tst_store_reports_heavy), run on demand with -L heavy.
ctest --test-dir build --output-on-failure --parallel "$(nproc)" --label-exclude heavy

sanitized='engine|identity|policy|sim|serve'
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build-asan -G Ninja "${launcher[@]}" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DRATELAB_SANITIZE=address,undefined -DRATELAB_BUILD_GUI=OFF -DRATELAB_BUILD_BENCH=OFF \
      >/dev/null
# Build only what those suites run: their test executables (tests that are scripts, such as
# the replay's Python peer, have none) and ratelab-cli.
mapfile -t targets < <(ctest --test-dir build-asan -N --label-regex "$sanitized" \
                             --label-exclude timing |
                       sed -n 's/^ *Test *#[0-9]*: *//p' |
                       while read -r t; do
                           ninja -C build-asan -t query "$t" >/dev/null 2>&1 && echo "$t"
                       done)
cmake --build build-asan --parallel "$(nproc)" --target ratelab-cli "${targets[@]}"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure --parallel "$(nproc)" --label-regex "$sanitized" \
          --label-exclude timing

# The suites that run threads (label "threads": the sharded memory store, settling, policy
# reloads, the identity deriver, the Redis store's connection pool and Cluster client, the
# decision server's event loops) once more under ThreadSanitizer.
cmake -S . -B build-tsan -G Ninja "${launcher[@]}" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
      -DRATELAB_SANITIZE=thread -DRATELAB_BUILD_GUI=OFF -DRATELAB_BUILD_BENCH=OFF >/dev/null
mapfile -t threaded < <(ctest --test-dir build-tsan -N --label-regex threads --label-exclude timing |
                        sed -n 's/^ *Test *#[0-9]*: *//p')
cmake --build build-tsan --parallel "$(nproc)" --target "${threaded[@]}"
TSAN_OPTIONS="halt_on_error=1:suppressions=$PWD/tests/tsan.supp" \
    ctest --test-dir build-tsan --output-on-failure --parallel "$(nproc)" --label-regex threads \
          --label-exclude timing

scripts/fuzz.sh --smoke
