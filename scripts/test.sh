#!/usr/bin/env bash
# Runs every Latchkey test. Installs what the tests need when it is missing (Node.js and the
# outside client libraries in tests/js), checks formatting, builds the workspace once, runs the
# whole suite against real daemons, then runs clippy. Used by CI (.ci/run) as is.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=
apt_install() {
    [ -n "$apt_updated" ] || { as_root apt-get update -qq; apt_updated=1; }
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

step() { printf '\n==> %s\n' "$*"; }

step "test dependencies"
command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
command -v setpriv >/dev/null || apt_install util-linux
# Debian's Chromium for the browser tests (playwright-core drives it; it downloads no browser).
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || apt_install chromium
if [ ! -d tests/js/node_modules/jose ] || [ ! -d tests/js/node_modules/playwright-core ] || [ ! -d tests/js/node_modules/openid-client ]; then
    npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
fi

# The local SMTP sink of the invitation e-mail tests.
python3 -c "import aiosmtpd" 2>/dev/null || python3 -m pip install --quiet aiosmtpd

step "cargo fmt --check"
cargo fmt --all -- --check

step "build (one build for the binaries and the test binary)"
cargo build --workspace --bins --locked
cargo test --workspace --locked --no-run

step "tests"
cargo test --workspace --locked

step "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
