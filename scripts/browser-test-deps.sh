#!/bin/sh
# Installs the headless browser the HTML-report test drives (Debian packages
# `chromium` + `chromium-driver`); the test skips with a message without them
# (and fails under .ci/run, which sets TLPSIM_REQUIRE_BROWSER).
set -e
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium and chromedriver already installed"; exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "installing chromium and chromium-driver (Debian packages)"
# non-interactive: CI has no terminal and no standard input
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq </dev/null
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends \
    chromium chromium-driver </dev/null >/dev/null
command -v chromium >/dev/null && command -v chromedriver >/dev/null
echo "installed: $(chromium --version 2>/dev/null | head -1)"
