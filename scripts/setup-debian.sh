#!/usr/bin/env bash
# Installs the Debian 12 packages ratelab builds, runs and tests with. Idempotent: does nothing
# when everything is already installed. Needs root (or sudo).
set -euo pipefail

packages=(
    cmake ninja-build g++ pkgconf
    ccache               # build_engine_only compiles the engine and its suites a second time with
                         # the Release tree's flags: ccache serves that tree from the first
    qt6-base-dev qt6-charts-dev qt6-httpserver-dev
    qt6-websockets-dev   # Qt6HttpServer's CMake package needs it but the package does not depend on it
    libqt6opengl6-dev    # Qt6Charts' CMake package needs Qt6OpenGL; not pulled in without recommends
    libxkbcommon-dev
    libhiredis-dev libssl-dev nlohmann-json3-dev libxxhash-dev libbenchmark-dev zlib1g-dev
    libhttp-parser-dev   # request framing of ratelab-cli serve
    libyaml-cpp-dev      # Envoy's rate limit service configuration (app/formats/envoy)
    libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
                         # serve --grpc: Envoy's rate limit service, code generated at build time
    libtomlplusplus-dev  # Traefik's TOML dynamic configuration (app/formats/import/traefik)
    redis-server redis-tools nginx-light   # nginx: exports, auth_request in front of serve
    redis-sentinel       # the Sentinel failover drill (tests/engine/redis, tests/serve)
    haproxy              # the Lua action in front of serve (tests/serve)
    wrk                  # tests/bench/http: serve against nginx limit_req
    python3-prometheus-client   # /metrics read by a real Prometheus parser
    fonts-dejavu-core xvfb xauth
    python3-jsonschema
    locales              # de_DE.UTF-8 below: numbers in files must not follow a comma locale
    clang-16 libclang-rt-16-dev   # the libFuzzer harnesses (tests/fuzz, scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "ratelab: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# tests/cli/tst_cli runs the CLI under a comma-decimal locale.
if ! locale -a 2>/dev/null | grep -qx 'de_DE.utf8'; then
    echo "ratelab: generating the de_DE.UTF-8 locale"
    $sudo sed -i 's/^# *\(de_DE.UTF-8 UTF-8\)/\1/' /etc/locale.gen
    grep -q '^de_DE.UTF-8 UTF-8' /etc/locale.gen || echo 'de_DE.UTF-8 UTF-8' | $sudo tee -a /etc/locale.gen >/dev/null
    $sudo locale-gen >/dev/null
fi
