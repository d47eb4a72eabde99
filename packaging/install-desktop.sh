#!/usr/bin/env bash
# Put DiffLab in the desktop menu and make .h5 session files open with it.
#   bash packaging/install-desktop.sh                 # for this user, into ~/.local
#   PREFIX=/usr/local bash packaging/install-desktop.sh   # for everyone (as root)
# Installs the frozen app from dist/difflab when it has been built (packaging/build.sh);
# otherwise the desktop entry runs the `difflab` already on PATH (pip install).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
prefix="${PREFIX:-$HOME/.local}"
share="$prefix/share"
id=io.github.difflab.DiffLab

if [ -x "$here/../dist/difflab/difflab" ]; then
    mkdir -p "$prefix/lib" "$prefix/bin"
    rm -rf "$prefix/lib/difflab"
    cp -a "$here/../dist/difflab" "$prefix/lib/difflab"
    ln -sf "$prefix/lib/difflab/difflab" "$prefix/bin/difflab"
    echo "installed the app in $prefix/lib/difflab (command: $prefix/bin/difflab)"
fi

install -Dm644 "$here/linux/$id.desktop" "$share/applications/$id.desktop"
install -Dm644 "$here/linux/$id.metainfo.xml" "$share/metainfo/$id.metainfo.xml"
install -Dm644 "$here/linux/$id.mime.xml" "$share/mime/packages/$id.xml"
install -Dm644 "$here/linux/$id.svg" "$share/icons/hicolor/scalable/apps/$id.svg"
for png in "$here"/linux/icons/*.png; do
    size="$(basename "$png" .png)"
    install -Dm644 "$png" "$share/icons/hicolor/$size/apps/$id.png"
done

command -v update-mime-database >/dev/null && update-mime-database "$share/mime"
command -v update-desktop-database >/dev/null && update-desktop-database "$share/applications"
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q "$share/icons/hicolor" 2>/dev/null || true
if command -v xdg-mime >/dev/null; then
    xdg-mime default "$id.desktop" application/x-difflab-session
fi
echo "DiffLab is in the applications menu; .h5 sessions open with it"
