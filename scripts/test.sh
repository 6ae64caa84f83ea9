#!/usr/bin/env bash
# Installs what ratelab needs, builds it and runs every test: the Release build's whole CTest
# suite (engine, sim, gui, redis, policy, identity labels), then the engine and CLI tests again
# under AddressSanitizer and UndefinedBehaviorSanitizer. The tests start their own redis-server
# and nginx on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
scripts/build.sh
ctest --test-dir build --output-on-failure --parallel "$(nproc)"

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
      -DRATELAB_SANITIZE=address,undefined -DRATELAB_BUILD_GUI=OFF -DRATELAB_BUILD_BENCH=OFF \
      >/dev/null
cmake --build build-asan --parallel "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure --parallel "$(nproc)" --label-regex 'engine|policy|identity|sim'
