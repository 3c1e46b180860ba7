#!/usr/bin/env bash
# Runs a command with a PgBouncer in transaction mode in front of the PostgreSQL server that the
# PG* variables name (run it inside pg_virtualenv), then stops PgBouncer. The command sees
# LATCHKEY_TEST_PGBOUNCER=127.0.0.1:<port>: the end-to-end harness, the store's unit tests and the
# backends bench then connect their daemons through PgBouncer (`pooler = "transaction"`), and
# straight to the server for what needs a session of its own (`direct_url_file`). Two more serve
# single tests: LATCHKEY_TEST_PGBOUNCER_QUICK (a 1 s `query_wait_timeout`) and, when the server
# has TLS on, LATCHKEY_TEST_PGBOUNCER_TLS=<port> (TLS required of clients, for "localhost", with
# its CA in <dir>/tls.crt given as LATCHKEY_TEST_PGBOUNCER_TLS_CA; TLS to the server; SCRAM
# secrets, not passwords, in its auth_file), set up as docs/scaling.md has operators do it.
#
#   pg_virtualenv scripts/with-pgbouncer.sh env LATCHKEY_TEST_BACKEND=postgres \
#       cargo test -p latchkey-tests --test e2e -- cluster::
#
# Each database gets a server pool of POOL (default 3) connections, fewer than one test daemon's
# client pool of 4: consecutive transactions of a client connection do run on different server
# connections. PgBouncer is installed from Debian when missing.
set -euo pipefail

PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}
if [ ! -x "$PGBOUNCER" ]; then
    as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer
fi
: "${PGPORT:?run this inside pg_virtualenv (PGPORT, PGUSER and PGPASSWORD name the server)}"
: "${PGPASSWORD:?PGPASSWORD is needed: PgBouncer logs in to the server with it}"
user=${PGUSER:-postgres}

dir=$(mktemp -d /tmp/latchkey-pgbouncer.XXXXXX)
# The client logs in as the server's user, with its password (SCRAM on both sides).
(umask 077 && printf '"%s" "%s"\n' "$user" "$PGPASSWORD" > "$dir/users.txt")
ulimit -n 8192 2>/dev/null || true

# start NAME QUERY_WAIT_TIMEOUT [AUTH_FILE [SETTINGS]]: a PgBouncer of its own; prints its port.
start() {
    local name=$1 wait=$2 auth=${3:-$dir/users.txt} more=${4:-} port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    cat > "$dir/$name.ini" <<EOF
[databases]
* = host=127.0.0.1 port=$PGPORT
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $auth
pool_mode = transaction
default_pool_size = ${POOL:-3}
max_client_conn = 4000
server_reset_query =
query_wait_timeout = $wait
# After a failed login to the server, PgBouncer refuses new clients this long (default 15 s).
server_login_retry = 1
logfile = $dir/$name.log
pidfile = $dir/$name.pid
$more
EOF
    # PgBouncer will not run as root: it drops to the server's system user then.
    local as_user=()
    if [ "$(id -u)" = 0 ]; then
        chown -R postgres "$dir"
        as_user=(-u postgres)
    fi
    "$PGBOUNCER" -d "${as_user[@]}" "$dir/$name.ini" || { cat "$dir/$name.log" >&2; return 1; }
    for _ in $(seq 50); do
        if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then
            echo "$port"
            return 0
        fi
        sleep 0.1
    done
    echo "with-pgbouncer.sh: PgBouncer ($name) does not answer on 127.0.0.1:$port:" >&2
    cat "$dir/$name.log" >&2
    return 1
}
stop() {
    for pid in "$dir"/*.pid; do
        [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
    done
    sleep 0.2
    rm -rf "$dir"
}
trap stop EXIT
# The one every daemon goes through: a transaction that waits 15 s for a server connection fails
# (PgBouncer's default, 120 s, would hang a test instead).
port=$(start main 15) || exit 1
# For the outage test: a transaction fails after waiting 1 s, which is how an operator gets an
# outage answered 503 within 2 s behind PgBouncer (docs/scaling.md).
quick=$(start quick 1) || exit 1
# As production runs it, when the server has TLS: clients must use TLS (a certificate for
# "localhost" made here), PgBouncer checks the server's certificate against its CA (verify-ca:
# PgBouncer reaches it by address), and its auth_file holds the role's SCRAM secret, copied from
# the server, so that PgBouncer logs in to the server with the client's own proof (pass-through).
tls=
server_cert=$(psql -XAtc 'SHOW ssl_cert_file' 2>/dev/null || true)
# A relative path is the server's data directory's.
case "$server_cert" in
    /*) ;;
    ?*) server_cert="$(psql -XAtc 'SHOW data_directory' 2>/dev/null || true)/$server_cert" ;;
esac
secret=$(psql -XAtc "SELECT rolpassword FROM pg_authid WHERE rolname = '$user'" 2>/dev/null || true)
if [ "$(psql -XAtc 'SHOW ssl' 2>/dev/null || true)" != on ] || [ ! -r "$server_cert" ]; then
    echo "with-pgbouncer.sh: the server has no TLS: no PgBouncer with TLS" >&2
elif [ "${secret#SCRAM-SHA-256}" = "$secret" ]; then
    echo "with-pgbouncer.sh: the server keeps no SCRAM secret for $user: no PgBouncer with TLS" >&2
elif ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost -addext basicConstraints=critical,CA:FALSE \
    -keyout "$dir/tls.key" -out "$dir/tls.crt" 2> "$dir/openssl.err"; then
    echo "with-pgbouncer.sh: openssl cannot make a certificate: no PgBouncer with TLS" >&2
    cat "$dir/openssl.err" >&2
else
    (umask 077 && printf '"%s" "%s"\n' "$user" "$secret" > "$dir/users-scram.txt")
    tls=$(start tls 15 "$dir/users-scram.txt" "client_tls_sslmode = require
client_tls_key_file = $dir/tls.key
client_tls_cert_file = $dir/tls.crt
server_tls_sslmode = verify-ca
server_tls_ca_file = $server_cert") || exit 1
fi
echo "PgBouncer $("$PGBOUNCER" --version | head -1 | cut -d' ' -f2), transaction mode, on 127.0.0.1:$port (and :$quick${tls:+, TLS :$tls})" >&2
LATCHKEY_TEST_PGBOUNCER=127.0.0.1:$port LATCHKEY_TEST_PGBOUNCER_QUICK=127.0.0.1:$quick \
    LATCHKEY_TEST_PGBOUNCER_TLS=$tls LATCHKEY_TEST_PGBOUNCER_TLS_CA=${tls:+$dir/tls.crt} "$@"
