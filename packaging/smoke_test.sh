#!/usr/bin/env bash
# Smoke-test the frozen app folder with no Python environment around it.
#   bash packaging/smoke_test.sh [dist/difflab]
set -euo pipefail
app="$(cd "${1:-$(dirname "$0")/../dist/difflab}" && pwd)/difflab"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
# A bare environment: no virtualenv, no PYTHONPATH, no Python on PATH.
frozen() { env -i HOME="$work" PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }
step() { printf '%-48s' "$1"; }

step "difflab --version"
frozen "$app" --version

step "headless run of a built-in model"
frozen "$app" run lorenz --t1 2 --dt 1e-3 --out run.h5 2>/dev/null
frozen "$app" open run.h5 --json > open.json
grep -q '"lorenz"' open.json && echo "  run.h5 reopened"

step "sharded sweep over 8 CPU devices"
cat > sweep.toml <<'TOML'
model = "lorenz"
[solve]
solver = "rk4"
t1 = 0.5
dt = 1e-3
[space.grid]
rho = { linspace = [0.0, 28.0, 64] }
TOML
frozen XLA_FLAGS=--xla_force_host_platform_device_count=8 \
    "$app" sweep sweep.toml --out sweep.h5 --json > sweep.json 2>/dev/null
grep -q '"points": 64' sweep.json && echo "64 points, summary: $(tr -d '\n' < sweep.json | cut -c1-60)..."

step "window opened offscreen for 5 s"
status=0
frozen QT_QPA_PLATFORM=offscreen timeout 5 "$app" gui 2> gui.log || status=$?
if [ "$status" -ne 124 ] || grep -q Traceback gui.log; then
    echo "FAILED (exit $status)"; cat gui.log; exit 1
fi
echo "still running after 5 s, no errors"
echo "smoke test passed: $app"
