#!/usr/bin/env bash
# Installs the Debian package that scripts/dist.sh built on this machine with dpkg, checks what it
# put where, runs the installed latchkeyd (--version, check-config, a start as the package's
# user with the CLI talking to it), then purges it and leaves the machine as it was.
#
#   scripts/test-package.sh path/to/latchkey_VERSION-1_ARCH.deb [BUILT_DIR]
#
# BUILT_DIR (default target/debug) holds the binaries the package was made from: the installed
# latchkeyd must say the same --version.
# Needs root and dpkg (Debian 12); elsewhere it says so and does nothing.
set -euo pipefail
deb=${1:?usage: scripts/test-package.sh path/to/latchkey_VERSION-1_ARCH.deb [BUILT_DIR]}
built=${2:-target/debug}
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ] || ! command -v dpkg >/dev/null; then
    echo "test-package.sh: skipped: installing a package needs root and dpkg" >&2
    exit 0
fi
if dpkg -s latchkey >/dev/null 2>&1; then
    echo "test-package.sh: a latchkey package is already installed here; not touching it" >&2
    exit 1
fi

fail() { echo "test-package.sh: FAILED: $*" >&2; exit 1; }
# What the package may leave behind and this machine did not have before.
had_user=$(getent passwd latchkey >/dev/null && echo 1 || echo 0)
had_state=$([ -e /var/lib/latchkey ] && echo 1 || echo 0)
daemon_pid=
work=$(mktemp -d)
cleanup() {
    [ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || true
    dpkg --purge latchkey >/dev/null 2>&1 || true
    rm -rf /run/latchkey "$work"
    [ "$had_state" = 1 ] || rm -rf /var/lib/latchkey
    [ "$had_user" = 1 ] || { userdel latchkey 2>/dev/null || true; groupdel latchkey 2>/dev/null || true; }
}
trap cleanup EXIT

echo "test-package.sh: dpkg -i $deb"
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i"; }
grep -q "systemctl enable --now latchkeyd" "$work/dpkg.log" || fail "postinst did not say what to do next"

# The files, where Debian expects them.
for f in /usr/bin/latchkeyd /usr/bin/latchkey /etc/latchkey/config.toml \
    /usr/lib/systemd/system/latchkeyd.service /usr/lib/sysusers.d/latchkey.conf \
    /usr/share/man/man8/latchkeyd.8.gz /usr/share/man/man1/latchkey-tenant-update.1.gz \
    /usr/share/bash-completion/completions/latchkey /usr/share/zsh/vendor-completions/_latchkey \
    /usr/share/fish/vendor_completions.d/latchkey.fish /usr/share/doc/latchkey/config.example.toml; do
    [ -e "$f" ] || fail "$f is not installed"
done
dpkg-query -W -f='${Conffiles}\n' latchkey | grep -q /etc/latchkey/config.toml || fail "config.toml is not a conffile"
grep -q '^ExecStart=/usr/bin/latchkeyd --config /etc/latchkey/config.toml$' /usr/lib/systemd/system/latchkeyd.service \
    || fail "the unit does not run /usr/bin/latchkeyd"
getent passwd latchkey | grep -q ':/var/lib/latchkey:/usr/sbin/nologin$' || fail "no system user latchkey"
[ "$(stat -c '%U %a' /var/lib/latchkey)" = "latchkey 700" ] || fail "/var/lib/latchkey is not latchkey's, 0700"

# The installed binaries are the ones built here.
want=$("$built/latchkeyd" --version 2>/dev/null || true)
got=$(latchkeyd --version)
echo "test-package.sh: $got"
case "$got" in "latchkeyd "*" (commit "*", schema "*")") ;; *) fail "latchkeyd --version said: $got" ;; esac
[ -z "$want" ] || [ "$got" = "$want" ] || fail "installed $got, built $want"
latchkey --version | grep -q '^latchkey .* (commit .*)$' || fail "latchkey --version"

# check-config on the packaged configuration, as the package's user would run it.
runuser -u latchkey -- latchkeyd check-config --config /etc/latchkey/config.toml >/dev/null 2>"$work/check.log" \
    || { cat "$work/check.log" >&2; fail "check-config on the packaged configuration"; }
grep -q "configuration is valid" "$work/check.log" || fail "check-config did not say valid"
grep -q "database /var/lib/latchkey/latchkey.db: none yet" "$work/check.log" || fail "check-config: no schema line"

# A start as systemd would make it (the unit's user, its runtime directory), on a free loopback
# port; the CLI as root talks to it over the default admin socket.
install -d -o latchkey -g latchkey -m 0750 /run/latchkey
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
runuser -u latchkey -- env LATCHKEY_SERVER_LISTEN="127.0.0.1:$port" LATCHKEY_SERVER_PUBLIC_URL="http://localhost:$port" \
    LATCHKEY_SERVER_METRICS_LISTEN="" latchkeyd --config /etc/latchkey/config.toml 2>"$work/daemon.log" &
daemon_pid=$!
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$work/daemon.log" >&2; fail "the daemon is not ready"; }
status=$(latchkey status -o json)
echo "$status" | grep -q '"database_schema_version"' || fail "latchkey status: $status"
latchkey tenant create packaged >/dev/null 2>&1 || fail "latchkey tenant create over the default socket"
curl -fsS "http://127.0.0.1:$port/packaged/.well-known/openid-configuration" | grep -q '"issuer"' \
    || fail "the new tenant's discovery"
[ "$(stat -c '%U %a' /var/lib/latchkey/latchkey.db)" = "latchkey 600" ] || fail "the database is not latchkey's, 0600"
kill "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=
work=$(mktemp -d)

# Purge removes the package and keeps the data, saying so.
dpkg --purge latchkey >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg --purge"; }
[ ! -e /usr/bin/latchkeyd ] && [ ! -e /etc/latchkey/config.toml ] || fail "purge left the package's files"
[ -e /var/lib/latchkey/latchkey.db ] || fail "purge deleted the database"
grep -q "was kept" "$work/dpkg.log" || fail "purge did not say the data was kept"
echo "test-package.sh: ok: installed, ran, purged (data kept)"
