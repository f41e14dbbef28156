#!/usr/bin/env bash
# Make sure Debian's Chromium is installed: the headless browser tests/test_query_page.py drives (through
# Playwright for Python, pointed at /usr/bin/chromium; Playwright never downloads a browser of its own).
#
# Idempotent: does nothing but print the version when `chromium` is on PATH. Otherwise installs Debian's
# chromium package non-interactively (apt-get update once, then install without recommends), as root or
# through sudo.
#
# Exit status: 0 with the version on stdout, non-zero with a message on stderr when Chromium is unavailable.
set -euo pipefail

PKG=chromium

die() {
    echo "ensure-chromium: $*" >&2
    exit 1
}

have() { command -v "$1" >/dev/null 2>&1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif have sudo; then
        if [ -t 0 ]; then sudo "$@"; else sudo -n "$@"; fi
    else
        die "not root and sudo is not available; run as root: apt-get install -y --no-install-recommends $PKG"
    fi
}

if ! have chromium; then
    have apt-get || die "chromium not found and apt-get is unavailable; install Chromium so that \`chromium\` is on PATH"
    echo "ensure-chromium: installing $PKG" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || die "apt-get update failed"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$PKG" >&2 ||
        die "apt-get install $PKG failed (is it in this distribution's repositories? apt-cache policy $PKG)"
    hash -r
    have chromium || die "$PKG installed but chromium is still not on PATH"
fi

# Debian's wrapper script may print a shell warning on stderr; the version is the line on stdout.
v="$(chromium --version 2>/dev/null | head -n1 || true)"
[ -n "$v" ] || die "chromium is on PATH ($(command -v chromium)) but did not report a version"
echo "chromium: $(command -v chromium) -- $v"
