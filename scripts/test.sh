#!/usr/bin/env bash
# Runs every Latchkey test. Installs what the tests need when it is missing (Node.js and the
# outside client libraries in tests/js), checks formatting, builds the workspace once, runs the
# whole suite against real daemons, then runs clippy. Used by CI (.ci/run) as is.
set -euo pipefail
cd "$(dirname "$0")/.."

# 1: also run the store's unit tests and the end-to-end suite on PostgreSQL (a throwaway
# pg_virtualenv cluster, installed from Debian when missing), then the store's unit tests and the
# end-to-end tests of the database's paths through PgBouncer in transaction mode.
POSTGRES_PASS=1
# The end-to-end tests that run through PgBouncer too (155 of 284): sign-ins, codes, refreshes,
# device codes, keys, tenants, users, apps, bulk invites, declarative apply, SCIM, social logins,
# DPoP, PAR, client assertions, back-channel logouts, webhooks, several nodes, outages, the audit
# cursor and migrate-store. About two and a half minutes.
PGBOUNCER_TESTS="cluster:: passkeys oidc:: device:: audit:: hardening:: harness:: migrate_store:: keys:: tenants:: \
users:: apps:: bulk:: declarative:: scim:: social par:: dpop:: client_auth:: backchannel:: webhooks::"

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
# The README walk-through's tools (tests/e2e/readme.rs runs it as written).
command -v curl >/dev/null && command -v jq >/dev/null || apt_install curl jq
# Debian's Chromium for the browser tests (playwright-core drives it; it downloads no browser).
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || apt_install chromium
# A font with Japanese and Chinese glyphs, for the pages' screenshots in those languages.
[ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || apt_install fonts-wqy-microhei
if [ ! -d tests/js/node_modules/jose ] || [ ! -d tests/js/node_modules/playwright-core ] || [ ! -d tests/js/node_modules/openid-client ] \
    || [ ! -d tests/js/node_modules/@axe-core/playwright ]; then
    npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
fi

# The local SMTP sink of the invitation e-mail tests.
python3 -c "import aiosmtpd" 2>/dev/null || python3 -m pip install --quiet aiosmtpd
# scim2-tester (PyPI), the outside SCIM checker, in a virtual environment of its own.
if [ ! -x tests/py/.venv/bin/python ] || ! tests/py/.venv/bin/python -c "import scim2_tester, httpx2, standardwebhooks, authlib" 2>/dev/null; then
    python3 -c "import ensurepip" 2>/dev/null || apt_install python3-venv
    python3 -m venv tests/py/.venv
    tests/py/.venv/bin/pip install --quiet --disable-pip-version-check -r tests/py/requirements.txt
fi
# PostgreSQL for the second end-to-end pass (Debian 12: PostgreSQL 15 and pg_virtualenv).
if [ "$POSTGRES_PASS" = 1 ]; then
    command -v pg_virtualenv >/dev/null || apt_install postgresql postgresql-common
    [ -x /usr/sbin/pgbouncer ] || apt_install pgbouncer
fi

# Dependency licences and bans (deny.toml); built once into ~/.cargo/bin (about three minutes).
command -v cargo-deny >/dev/null || cargo install --locked --quiet cargo-deny
# The Debian package of scripts/dist.sh (about one minute to build).
command -v cargo-deb >/dev/null || cargo install --locked --quiet cargo-deb

step "cargo fmt --check"
cargo fmt --all -- --check

step "build (one build for the binaries and the test binary)"
cargo build --workspace --bins --locked
cargo test --workspace --locked --no-run

step "tests"
cargo test --workspace --locked

# A short run of the crash trials on the debug binaries just built (SIGKILL under load, then
# every acknowledged write checked): keeps the trials' checks in step with the storage format.
# `bash scripts/crash-trials.sh` runs 100 on the release build. Every cargo call below selects
# the whole workspace and narrows by target: `-p` would unify features differently and rebuild
# the daemon (about 40 s and gigabytes of disk each time).
step "crash trials (20)"
TRIALS=20 cargo test --workspace --locked --bench crash_trials

# The release packaging, on the debug binaries just built (a release build takes minutes): the
# tarball and the .deb with their sums, then the .deb installed with dpkg, run and purged.
step "package: scripts/dist.sh, then dpkg -i"
scripts/dist.sh --profile dev --no-build --out target/dist-test
scripts/test-package.sh target/dist-test/latchkey_*.deb

if [ "$POSTGRES_PASS" = 1 ]; then
    # The same end-to-end tests, every daemon on its own database of a throwaway cluster (the
    # harness reads LATCHKEY_TEST_BACKEND; the tests and daemons read the PG* variables that
    # pg_virtualenv exports). Connections: per test thread at most a few daemons of 4 each.
    step "end-to-end tests on PostgreSQL"
    pg_threads=$(nproc)
    [ "$pg_threads" -le 8 ] || pg_threads=8
    pg_virtualenv -t -o max_connections=300 env PG_THREADS="$pg_threads" PGBOUNCER_TESTS="$PGBOUNCER_TESTS" sh -c '
        LATCHKEY_TEST_PG=1 cargo test --workspace --locked --lib &&
        LATCHKEY_TEST_BACKEND=postgres cargo test --workspace --locked --test e2e -- --test-threads="$PG_THREADS" &&
        echo "==> the store and the database paths through PgBouncer (transaction mode)" &&
        scripts/with-pgbouncer.sh sh -c "
            LATCHKEY_TEST_PG=1 cargo test --workspace --locked --lib &&
            LATCHKEY_TEST_BACKEND=postgres cargo test --workspace --locked --test e2e -- \
                --test-threads=$PG_THREADS $PGBOUNCER_TESTS"'
fi

step "cargo deny check licenses bans"
cargo deny --log-level error check licenses bans

step "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo doc (no warnings)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet

# fuzz/ is a workspace of its own, built with a sanitizer by scripts/fuzz.sh (minutes, so not
# here); checking that its targets compile keeps them in step with the daemon's API.
step "fuzz targets compile"
cargo check --manifest-path fuzz/Cargo.toml --bins --locked --target-dir target/fuzz-check
