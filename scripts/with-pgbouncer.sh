#!/usr/bin/env bash
# Runs a command with a PgBouncer in transaction mode in front of the PostgreSQL server that the
# PG* variables name (run it inside pg_virtualenv), then stops PgBouncer. The command sees
# LATCHKEY_TEST_PGBOUNCER=127.0.0.1:<port>: the end-to-end harness, the store's unit tests and the
# backends bench then connect their daemons through PgBouncer (`pooler = "transaction"`), and
# straight to the server for what needs a session of its own (`direct_url_file`).
#
#   pg_virtualenv scripts/with-pgbouncer.sh cargo test --test e2e -- cluster::
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
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The client logs in as the server's user, with its password (SCRAM on both sides).
(umask 077 && printf '"%s" "%s"\n' "$user" "$PGPASSWORD" > "$dir/users.txt")
cat > "$dir/pgbouncer.ini" <<EOF
[databases]
* = host=127.0.0.1 port=$PGPORT
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/users.txt
pool_mode = transaction
default_pool_size = ${POOL:-3}
max_client_conn = 4000
server_reset_query =
# A client that waits this long for a server connection fails, instead of hanging a test.
query_wait_timeout = 15
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
# PgBouncer will not run as root: it drops to the server's system user then.
as_user=()
if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$dir"
    as_user=(-u postgres)
fi
ulimit -n 8192 2>/dev/null || true
"$PGBOUNCER" -d "${as_user[@]}" "$dir/pgbouncer.ini"
stop() {
    [ -f "$dir/pgbouncer.pid" ] && kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null || true
    sleep 0.2
    rm -rf "$dir"
}
trap stop EXIT
for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
    sleep 0.1
done
echo "PgBouncer $("$PGBOUNCER" --version | head -1 | cut -d' ' -f2), transaction mode, on 127.0.0.1:$port" >&2
LATCHKEY_TEST_PGBOUNCER=127.0.0.1:$port "$@"
