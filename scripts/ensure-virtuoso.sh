#!/usr/bin/env bash
# Make sure OpenLink Virtuoso 7 (virtuoso-t + isql-vt) is installed, for kg_adapters/testing/virtuoso.py.
#
# Idempotent: does nothing but print the version when both binaries are on PATH. Otherwise installs Debian's
# virtuoso-opensource-7-bin non-interactively (apt-get update once, then install without recommends), as root
# or through sudo. That package ships only the binaries -- no init script, systemd unit or maintainer scripts --
# so nothing starts listening on the stock ports 1111/8890; the test harness picks free ports anyway. If a
# full virtuoso-opensource-7 server package (which does ship a service) is installed, its service is stopped
# and disabled so it cannot hold those ports or the machine's memory.
#
# Exit status: 0 with the version on stdout, non-zero with a message on stderr when Virtuoso is unavailable.
set -euo pipefail

PKG=virtuoso-opensource-7-bin
SERVICE=virtuoso-opensource-7

die() {
    echo "ensure-virtuoso: $*" >&2
    exit 1
}

have() { command -v "$1" >/dev/null 2>&1; }

version() {
    # virtuoso-t --version prints on stderr and exits 1, so take the text, not the status.
    virtuoso-t --version 2>&1 | grep -m1 '^Version' || true
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif have sudo; then
        if [ -t 0 ]; then sudo "$@"; else sudo -n "$@"; fi
    else
        die "not root and sudo is not available; run as root: apt-get install -y --no-install-recommends $PKG"
    fi
}

stop_system_service() {
    # Only the full server package has a service; stop it if present so nothing sits on 1111/8890.
    if [ -e "/etc/init.d/$SERVICE" ] || { have systemctl && systemctl list-unit-files "$SERVICE.service" 2>/dev/null | grep -q "$SERVICE"; }; then
        echo "ensure-virtuoso: stopping and disabling the system service $SERVICE" >&2
        if have systemctl && [ -d /run/systemd/system ]; then
            as_root systemctl disable --now "$SERVICE" >/dev/null 2>&1 || true
        else
            as_root "/etc/init.d/$SERVICE" stop >/dev/null 2>&1 || true
            have update-rc.d && as_root update-rc.d "$SERVICE" disable >/dev/null 2>&1 || true
        fi
    fi
}

if ! have virtuoso-t || ! have isql-vt; then
    have apt-get || die "virtuoso-t/isql-vt not found and apt-get is unavailable; install Virtuoso 7 ($PKG on Debian/Ubuntu) so both are on PATH"
    echo "ensure-virtuoso: installing $PKG" >&2
    export DEBIAN_FRONTEND=noninteractive
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
        die "apt-get update failed"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$PKG" >&2 ||
        die "apt-get install $PKG failed (is it in this distribution's repositories? apt-cache policy $PKG)"
    hash -r
    have virtuoso-t && have isql-vt || die "$PKG installed but virtuoso-t/isql-vt are still not on PATH"
fi

stop_system_service

v="$(version)"
[ -n "$v" ] || die "virtuoso-t is on PATH ($(command -v virtuoso-t)) but did not report a version"
echo "virtuoso-t: $(command -v virtuoso-t) -- $v"
