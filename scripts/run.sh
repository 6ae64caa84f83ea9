#!/usr/bin/env bash
# Installs what ratelab needs, builds it and runs the main job: the workbench on the embedded
# in-memory store, or, on a machine without a display, ratelab-cli on the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
scripts/build.sh
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
    exec build/app/gui/ratelab "$@"
fi
echo "ratelab: no display; running the default scenario headless"
exec build/app/cli/ratelab-cli run scenarios/header-rotation.json "$@"
