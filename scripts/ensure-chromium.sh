#!/usr/bin/env bash
# Make sure Debian's Chromium is installed: the headless browser tests/test_query_page.py drives (through
# Playwright for Python, pointed at /usr/bin/chromium; Playwright never downloads a browser of its own).
#
# Idempotent: does nothing but print the version when `chromium` is on PATH. Otherwise installs Debian's
# chromium package non-interactively, without recommends (apt-get update first), as root or through sudo.
#
# Exit status: 0 with the version on stdout, non-zero with a message on stderr when Chromium is unavailable.
set -euo pipefail

die() {
    echo "ensure-chromium: $*" >&2
    exit 1
}

if ! command -v chromium >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || die "chromium not found and apt-get is unavailable; install Chromium so that \`chromium\` is on PATH"
    echo "ensure-chromium: installing chromium" >&2
    run=(env DEBIAN_FRONTEND=noninteractive)
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "not root and sudo is not available; run as root: apt-get install -y chromium"
        run=(sudo -n "${run[@]}")
    fi
    "${run[@]}" apt-get update -qq || die "apt-get update failed"
    "${run[@]}" apt-get install -y -qq --no-install-recommends chromium >&2 ||
        die "apt-get install chromium failed (is it in this distribution's repositories? apt-cache policy chromium)"
    hash -r
    command -v chromium >/dev/null 2>&1 || die "chromium installed but still not on PATH"
fi

# Debian's wrapper script may print a shell warning on stderr; the version is the line on stdout.
version="$(chromium --version 2>/dev/null | head -n1 || true)"
[ -n "$version" ] || die "chromium is on PATH ($(command -v chromium)) but did not report a version"
echo "chromium: $(command -v chromium) -- $version"
