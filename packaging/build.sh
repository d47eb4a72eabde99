#!/usr/bin/env bash
# Build a self-contained Linux app folder, dist/difflab/, with PyInstaller (onedir).
#   bash packaging/build.sh            # uses ./.venv, creating it if needed
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q -e ".[gui]" "pyinstaller>=6.10"
.venv/bin/pyinstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/difflab.spec
du -sh dist/difflab
echo "built dist/difflab/difflab"
