//! `latchkeyd migrate-store --to postgres`: copies a stopped SQLite installation's whole state
//! into an empty PostgreSQL database, in one transaction, and commits only when every table's
//! row count matches. The SQLite file is opened read-only and never written.
//!
//! The copy is generic over the columns: each table's columns and types are read from
//! PostgreSQL's catalogue (after its migrations ran), the same names are selected from SQLite,
//! and each value is checked against the PostgreSQL type on the way (SQLite's INTEGER 0/1 flags
//! become BOOLEAN). Rows go through binary `COPY`. Ids are copied as they are (the identity
//! columns are `BY DEFAULT`), then every identity sequence is moved past the largest id.
//!
//! Every function here blocks; `main` calls [`run`] before any runtime starts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use rusqlite::types::ValueRef as SqliteRef;
use rusqlite::{Connection, OpenFlags};

use crate::pg::{PgSettings, PgTarget, error_text, migrate};
use crate::sql::Value;

/// Every table of the schema, parents before children (the foreign keys of `migrations/`): the
/// copy inserts in this order, so each row's parent is there before it. The unit tests check that
/// this is exactly SQLite's table list and PostgreSQL's (less its cluster tables), in an order the
/// foreign keys allow.
pub const TABLES: &[&str] = &[
    "tenants",
    "tenant_logos",
    "tenant_old_urls",
    "applications",
    "app_logos",
    "signing_keys",
    "users",
    "credentials",
    "challenges",
    "invites",
    "sessions",
    "session_apps",
    "consents",
    "webhooks",
    "outbox",
    "authorize_requests",
    "pushed_requests",
    "client_assertion_jtis",
    "dpop_proofs",
    "authorization_codes",
    "refresh_tokens",
    "revoked_access_tokens",
    "device_codes",
    "roles",
    "user_roles",
    "scim_users",
    "scim_groups",
    "audit",
    "social_providers",
    "social_links",
    "social_states",
    "social_pending_links",
    "mds_blob",
    "mds_entries",
];

/// Tables of both engines that are not copied: the release record, which the PostgreSQL
/// database's own migration writes (`crate::schema`).
const BOOKKEEPING_TABLES: &[&str] = &["latchkey_release"];

/// PostgreSQL-only tables that must be empty too: rows in the change journal mean the database
/// has held data. (`cluster_nodes` and `cluster_jobs` may hold rows of nodes that ran and
/// stopped; a node still running is refused separately.)
const CLUSTER_TABLES: &[&str] = &["cluster_changes"];

/// PostgreSQL-only columns, left to their defaults by the copy: `audit.txid` orders the trail
/// by commit for `audit --follow` (SQLite commits in id order and needs none).
const POSTGRES_ONLY_COLUMNS: &[(&str, &str)] = &[("audit", "txid")];

/// What to copy from where.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The SQLite database file.
    pub from: PathBuf,
    /// The PostgreSQL database (`[storage]` with backend = "postgres").
    pub to: PgSettings,
    /// The key-encryption key file, named in the next steps (the sealed keys are copied as they
    /// are: every node needs this same file).
    pub kek_file: PathBuf,
}

/// Rows per table, as counted in each database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub table: &'static str,
    pub sqlite: i64,
    pub postgres: i64,
}

/// A finished copy.
#[derive(Debug)]
pub struct Copied {
    pub target: String,
    pub counts: Vec<Count>,
}

/// Runs the copy. `out` gets the table of counts, `progress` (stderr) what is being copied.
/// An error is a sentence that says what to do; nothing is committed to PostgreSQL unless this
/// returns `Ok`.
pub fn run(plan: &Plan, out: &mut dyn Write, progress: &mut dyn Write) -> Result<Copied, String> {
    let from = &plan.from;
    if !from.is_file() {
        return Err(format!(
            "no SQLite database at {}: give its path with --from (the daemon's storage.path, by default \
             {{data_dir}}/latchkey.db, e.g. /var/lib/latchkey/latchkey.db)",
            from.display()
        ));
    }
    let leftovers = Leftovers::before(from);
    let result = copy(plan, out, progress);
    // The lock and the SQLite connection are closed now.
    leftovers.clean(from);
    result
}

/// Files beside the database that reading it may create: SQLite opens its `-wal` and `-shm`
/// files even read-only (and leaves them), and the lock file is created when missing. Run as
/// root on the daemon's directory, they would be root's, and a daemon started on SQLite again
/// could not open them. What this run created is removed (the WAL is empty: a read-only
/// connection writes no frames) or, for the lock file, given to the database file's owner.
struct Leftovers {
    wal: bool,
    shm: bool,
    lock: bool,
}

fn beside(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

impl Leftovers {
    fn before(db: &Path) -> Leftovers {
        Leftovers {
            wal: beside(db, "-wal").exists(),
            shm: beside(db, "-shm").exists(),
            lock: crate::lockfile::path_for(db).exists(),
        }
    }

    fn clean(&self, db: &Path) {
        let wal = beside(db, "-wal");
        let empty = std::fs::metadata(&wal).map(|m| m.len() == 0).unwrap_or(true);
        if !self.wal && !self.shm && empty {
            let _ = std::fs::remove_file(&wal);
            let _ = std::fs::remove_file(beside(db, "-shm"));
        }
        if !self.lock
            && let Ok(owner) = std::fs::metadata(db)
        {
            use std::os::unix::fs::MetadataExt;
            // Fails harmlessly when not root: the file is then this user's, as the database is.
            let _ = std::os::unix::fs::chown(crate::lockfile::path_for(db), Some(owner.uid()), Some(owner.gid()));
        }
    }
}

fn copy(plan: &Plan, out: &mut dyn Write, progress: &mut dyn Write) -> Result<Copied, String> {
    let from = &plan.from;
    // Held until the end: a daemon started meanwhile on this file is refused.
    let _lock = crate::lockfile::acquire_stopped(from, "migrate-store")?;
    let sqlite = open_source(from)?;

    let resolved = plan.to.resolve().map_err(|e| format!("{e}"))?;
    for warning in &resolved.warnings {
        let _ = writeln!(progress, "latchkeyd: warning: {warning}");
    }
    // The copy holds one session throughout (a migration lock, COPY): past any pooler.
    let target = resolved.session();
    let where_to = target.describe();
    let mut client = connect(target)?;
    // Refused before the schema is touched: a database in use (perhaps by nodes of an older
    // release) must not be migrated by a copy that then writes nothing. Checked again below,
    // under the migration lock, against a node starting meanwhile.
    refuse_unless_empty(&mut client, &where_to)?;
    migrate::migrate(&mut client)
        .map_err(|e| format!("cannot prepare the schema of the PostgreSQL database {where_to}: {e}"))?;
    let pg_err =
        |what: &str, e: postgres::Error| format!("{what} in the PostgreSQL database {where_to}: {}", error_text(&e));

    let mut tx = client.transaction().map_err(|e| pg_err("cannot begin a transaction", e))?;
    // Nodes starting meanwhile wait for this lock (they take it to migrate) until the COMMIT.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&crate::cluster::locks::MIGRATE])
        .map_err(|e| pg_err("cannot take the migration lock", e))?;
    refuse_unless_empty(&mut tx, &where_to)?;

    let mut counts = Vec::with_capacity(TABLES.len());
    for &table in TABLES {
        let sqlite_rows = copy_table(&sqlite, &mut tx, table, progress)
            .map_err(|e| format!("copying table {table} to {where_to} failed: {e}; nothing was committed"))?;
        counts.push(Count { table, sqlite: sqlite_rows, postgres: 0 });
    }
    set_identities(&mut tx).map_err(|e| pg_err("cannot set the identity sequences", e))?;
    // A generation past the empty database's: what the nodes read at start along with the tenants.
    tx.execute("UPDATE cluster_state SET generation = generation + 1", &[])
        .map_err(|e| pg_err("cannot update cluster_state", e))?;
    for c in &mut counts {
        c.postgres = tx
            .query_one(&format!("SELECT count(*) FROM {}", c.table), &[])
            .and_then(|r| r.try_get(0))
            .map_err(|e| pg_err(&format!("cannot count the rows of {}", c.table), e))?;
    }
    print_counts(out, &counts).map_err(|e| format!("cannot write the report: {e}"))?;
    let differ: Vec<&str> = counts.iter().filter(|c| c.sqlite != c.postgres).map(|c| c.table).collect();
    if !differ.is_empty() {
        // Dropping the transaction rolls it back.
        return Err(format!(
            "the row counts differ for {}: nothing was committed to {where_to}, and the SQLite file is unchanged. \
             Report this as a bug, with the table above",
            differ.join(", ")
        ));
    }
    tx.commit().map_err(|e| pg_err("COMMIT failed (nothing was copied)", e))?;
    let _ = client.close();
    drop(sqlite);
    Ok(Copied { target: where_to, counts })
}

/// The SQLite file, read-only, in one read transaction (one snapshot for every table), at the
/// schema version of this release.
fn open_source(path: &Path) -> Result<Connection, String> {
    let fail = |e: rusqlite::Error| format!("cannot read the SQLite database {}: {e}", path.display());
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(fail)?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(fail)?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(fail)?;
    let known = i64::try_from(crate::migrations::MIGRATIONS.len()).unwrap_or(i64::MAX);
    if version == 0 {
        return Err(format!("{} is not a Latchkey database (it has no schema version)", path.display()));
    }
    if version < known {
        return Err(format!(
            "the SQLite database {} is at schema version {version}, older than this release's ({known}): start the \
             current latchkeyd once on SQLite first (it upgrades the file), stop it, and run migrate-store again",
            path.display()
        ));
    }
    if version > known {
        return Err(format!(
            "the SQLite database {} is at schema version {version}, newer than this release's ({known}): run the \
             migrate-store of the release that wrote it",
            path.display()
        ));
    }
    conn.execute_batch("BEGIN").map_err(fail)?;
    let tables = sqlite_tables(&conn).map_err(fail)?;
    let mut expected: Vec<String> = TABLES.iter().chain(BOOKKEEPING_TABLES).map(|t| (*t).to_owned()).collect();
    expected.sort();
    if tables != expected {
        return Err(format!(
            "the SQLite database {} has the tables {tables:?}, not Latchkey's: nothing was copied",
            path.display()
        ));
    }
    Ok(conn)
}

/// The tables of a SQLite schema, sorted.
fn sqlite_tables(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )?;
    let names = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    Ok(names)
}

/// The columns of a SQLite table, in their order.
fn sqlite_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
    let names = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    Ok(names)
}

fn connect(target: &PgTarget) -> Result<postgres::Client, String> {
    let tls = crate::pg::tls::connector(target)?;
    // A bulk COPY may wait on a busy server for longer than a request should (the daemon's 2 s
    // TCP user timeout is for requests).
    let mut config = target.config.clone();
    config.tcp_user_timeout(std::time::Duration::from_secs(60));
    let client = config.connect(tls).and_then(|mut c| crate::pg::manager::clear_bounds(&mut c).map(|_| c));
    client.map_err(|e| {
        format!(
            "cannot connect to the PostgreSQL database {}: {}. Check [storage] url_file and direct_url_file (or the PG* variables) \
             and that the server is up",
            target.describe(),
            error_text(&e)
        )
    })
}

/// Refuses a database that holds data, or that a node is running on. Nothing is written.
fn refuse_unless_empty(tx: &mut impl postgres::GenericClient, where_to: &str) -> Result<(), String> {
    // A table the schema does not have yet (a new database, before its migration) holds nothing.
    let present = |tx: &mut _, table: &str| -> Result<bool, String> {
        postgres::GenericClient::query_one(tx, "SELECT to_regclass($1) IS NOT NULL", &[&table])
            .and_then(|r| r.try_get(0))
            .map_err(|e| format!("cannot read the schema of {where_to}: {}", error_text(&e)))
    };
    for &table in TABLES.iter().chain(CLUSTER_TABLES) {
        if !present(tx, table)? {
            continue;
        }
        let rows: bool = tx
            .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), &[])
            .and_then(|r| r.try_get(0))
            .map_err(|e| format!("cannot read table {table} of {where_to}: {}", error_text(&e)))?;
        if rows {
            return Err(format!(
                "the PostgreSQL database {where_to} is not empty: table {table} has rows. migrate-store copies into \
                 an empty database only: point [storage] url_file at a new database (e.g. `createdb -O latchkey \
                 latchkey`), or drop this one and create it again. Nothing was written"
            ));
        }
    }
    if !present(tx, "cluster_nodes")? {
        return Ok(());
    }
    let live = tx
        .query(
            "SELECT host, pid FROM cluster_nodes
             WHERE heartbeat_at >= CAST(extract(epoch FROM clock_timestamp()) AS BIGINT) - $1",
            &[&crate::cluster::NODE_TIMEOUT_SECS],
        )
        .map_err(|e| format!("cannot read cluster_nodes of {where_to}: {}", error_text(&e)))?;
    if let Some(node) = live.first() {
        let host: String = node.get(0);
        let pid: i64 = node.get(1);
        return Err(format!(
            "a latchkeyd node (PID {pid} on {host}) is running on the PostgreSQL database {where_to}: stop every \
             node first, then run migrate-store again. Nothing was written"
        ));
    }
    Ok(())
}

/// A column's PostgreSQL type, as the copy converts to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Text,
    Bytes,
    Bool,
}

impl Kind {
    fn of(data_type: &str) -> Option<(Kind, Type)> {
        Some(match data_type {
            "bigint" => (Kind::Int, Type::INT8),
            "integer" => (Kind::Int, Type::INT4),
            "text" => (Kind::Text, Type::TEXT),
            "bytea" => (Kind::Bytes, Type::BYTEA),
            "boolean" => (Kind::Bool, Type::BOOL),
            _ => return None,
        })
    }
}

/// One SQLite value as the PostgreSQL column's type wants it, or why it cannot be.
fn convert(kind: Kind, v: SqliteRef<'_>) -> Result<Value<'_>, String> {
    let found = match v {
        SqliteRef::Null => return Ok(Value::Null),
        SqliteRef::Integer(i) => match kind {
            Kind::Int => return Ok(Value::Int(i)),
            Kind::Bool if i == 0 || i == 1 => return Ok(Value::Bool(i == 1)),
            _ => format!("the integer {i}"),
        },
        SqliteRef::Text(t) => match (kind, std::str::from_utf8(t)) {
            (Kind::Text, Ok(s)) => return Ok(Value::Text(s)),
            (Kind::Bytes, _) => return Ok(Value::Blob(t)),
            (Kind::Text, Err(_)) => "text that is not UTF-8".to_owned(),
            _ => "text".to_owned(),
        },
        SqliteRef::Blob(b) => match (kind, std::str::from_utf8(b)) {
            (Kind::Bytes, _) => return Ok(Value::Blob(b)),
            (Kind::Text, Ok(s)) => return Ok(Value::Text(s)),
            _ => "a blob".to_owned(),
        },
        SqliteRef::Real(r) => format!("the real number {r}"),
    };
    let wanted = match kind {
        Kind::Int => "an integer",
        Kind::Text => "text",
        Kind::Bytes => "bytes",
        Kind::Bool => "0 or 1 (a boolean)",
    };
    Err(format!("found {found} where PostgreSQL wants {wanted}"))
}

/// How often a long copy says how far it got.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Copies one table through binary COPY; returns SQLite's row count (in the same snapshot).
fn copy_table(
    sqlite: &Connection,
    tx: &mut postgres::Transaction<'_>,
    table: &'static str,
    progress: &mut dyn Write,
) -> Result<i64, String> {
    let pg = |e: postgres::Error| error_text(&e);
    let sq = |e: rusqlite::Error| format!("reading SQLite: {e}");
    let columns = tx
        .query(
            "SELECT column_name, data_type FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
            &[&table],
        )
        .map_err(pg)?;
    let mut names = Vec::with_capacity(columns.len());
    let mut kinds = Vec::with_capacity(columns.len());
    let mut types = Vec::with_capacity(columns.len());
    for c in &columns {
        let name: String = c.get(0);
        let data_type: String = c.get(1);
        if POSTGRES_ONLY_COLUMNS.contains(&(table, name.as_str())) {
            continue;
        }
        let (kind, ty) = Kind::of(&data_type)
            .ok_or_else(|| format!("column {name} has the type {data_type}, which this copy does not know"))?;
        names.push(name);
        kinds.push(kind);
        types.push(ty);
    }
    let mut in_sqlite = sqlite_columns(sqlite, table).map_err(sq)?;
    let mut in_pg = names.clone();
    in_sqlite.sort();
    in_pg.sort();
    if in_sqlite != in_pg {
        return Err(format!("the columns differ: SQLite has {in_sqlite:?}, PostgreSQL {in_pg:?}"));
    }

    let total: i64 = sqlite.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).map_err(sq)?;
    let list = names.join(", ");
    let writer = tx.copy_in(&format!("COPY {table} ({list}) FROM STDIN (FORMAT binary)")).map_err(pg)?;
    let mut writer = BinaryCopyInWriter::new(writer, &types);
    let mut stmt = sqlite.prepare(&format!("SELECT {list} FROM {table}")).map_err(sq)?;
    let mut rows = stmt.query([]).map_err(sq)?;
    let mut done: i64 = 0;
    let started = Instant::now();
    let mut shown = started;
    while let Some(row) = rows.next().map_err(sq)? {
        let mut values: Vec<Value<'_>> = Vec::with_capacity(names.len());
        for (i, kind) in kinds.iter().enumerate() {
            let v = row.get_ref(i).map_err(sq)?;
            values.push(convert(*kind, v).map_err(|e| format!("row {} column {}: {e}", done + 1, names[i]))?);
        }
        let refs: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        writer.write(&refs).map_err(pg)?;
        done += 1;
        if shown.elapsed() >= PROGRESS_EVERY {
            shown = Instant::now();
            let _ = writeln!(progress, "latchkeyd: copying {table}: {done} of {total} rows");
        }
    }
    let written = writer.finish().map_err(pg)?;
    if started.elapsed() >= PROGRESS_EVERY {
        let _ =
            writeln!(progress, "latchkeyd: copied {table}: {written} rows in {:.1} s", started.elapsed().as_secs_f64());
    }
    Ok(total)
}

/// Moves every identity sequence past the largest id copied, so the next insert gets a new one.
fn set_identities(tx: &mut postgres::Transaction<'_>) -> Result<(), postgres::Error> {
    let identities = tx.query(
        "SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name",
        &[],
    )?;
    for r in &identities {
        let table: String = r.get(0);
        let column: String = r.get(1);
        if !TABLES.contains(&table.as_str()) {
            continue;
        }
        tx.execute(
            &format!(
                "SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)"
            ),
            &[&table, &column],
        )?;
    }
    Ok(())
}

fn print_counts(out: &mut dyn Write, counts: &[Count]) -> std::io::Result<()> {
    writeln!(out, "{:<24} {:>12} {:>12}", "table", "SQLite", "PostgreSQL")?;
    for c in counts {
        let mark = if c.sqlite == c.postgres { "" } else { "  MISMATCH" };
        writeln!(out, "{:<24} {:>12} {:>12}{mark}", c.table, c.sqlite, c.postgres)?;
    }
    Ok(())
}

/// What the operator does after a successful copy.
pub fn next_steps(plan: &Plan, copied: &Copied) -> String {
    let rows: i64 = copied.counts.iter().map(|c| c.postgres).sum();
    format!(
        "Copied {rows} rows of {tables} tables from {from} to {target}; the row counts match and the SQLite file \
         was not modified.\n\n\
         Next:\n\
         \x20 1. Copy the key-encryption key file {kek} to every node (same path as their keys.encryption_key_file, \
         owner latchkey, mode 0600): the signing keys and social secrets were copied sealed with it.\n\
         \x20 2. In every node's configuration keep [storage] backend = \"postgres\" with this url_file (or the same \
         PG* variables); a node still on backend = \"sqlite\" would serve the old file.\n\
         \x20 3. Start the nodes. Keep {from} as a backup until you are satisfied: nothing writes to it any more.\n",
        tables = copied.counts.len(),
        from = plan.from.display(),
        target = copied.target,
        kek = plan.kek_file.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's schema as this release's migrations make it.
    fn sqlite_schema() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for m in crate::migrations::MIGRATIONS {
            conn.execute_batch(m.sqlite).unwrap();
        }
        conn
    }

    /// `CREATE TABLE name` of every postgres.sql, in order.
    fn pg_tables() -> Vec<String> {
        let mut out = vec![];
        for sql in crate::migrations::MIGRATIONS.iter().map(|m| m.postgres) {
            for line in sql.lines() {
                if let Some(rest) = line.trim_start().strip_prefix("CREATE TABLE ") {
                    let name = rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap();
                    out.push(name.to_owned());
                }
            }
        }
        out
    }

    #[test]
    fn every_table_of_both_schemas_is_copied() {
        let mut listed: Vec<String> = TABLES.iter().map(|t| (*t).to_owned()).collect();
        listed.sort();
        let mut unique = listed.clone();
        unique.dedup();
        assert_eq!(listed, unique, "a table is listed twice");
        let copied = |tables: Vec<String>| -> Vec<String> {
            tables.into_iter().filter(|t| !BOOKKEEPING_TABLES.contains(&t.as_str())).collect()
        };
        assert_eq!(copied(sqlite_tables(&sqlite_schema()).unwrap()), listed, "SQLite's tables");
        let mut pg: Vec<String> = copied(pg_tables()).into_iter().filter(|t| !t.starts_with("cluster_")).collect();
        pg.sort();
        assert_eq!(pg, listed, "PostgreSQL's tables, less the cluster ones");
        let cluster: Vec<String> = pg_tables().into_iter().filter(|t| t.starts_with("cluster_")).collect();
        assert_eq!(cluster, ["cluster_state", "cluster_changes", "cluster_nodes", "cluster_jobs"]);
    }

    #[test]
    fn parents_are_copied_before_children() {
        let conn = sqlite_schema();
        for (i, table) in TABLES.iter().enumerate() {
            let mut stmt = conn.prepare(&format!("SELECT \"table\" FROM pragma_foreign_key_list('{table}')")).unwrap();
            let parents: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
            for parent in parents {
                let at = TABLES.iter().position(|t| *t == parent).unwrap_or(usize::MAX);
                assert!(at < i, "{table} refers to {parent}, which is copied after it");
            }
        }
    }

    /// The BOOLEAN columns of postgres.sql are INTEGER in up.sql: what `convert` turns into
    /// booleans (the copy finds them in the catalogue, not in a list).
    #[test]
    fn boolean_columns_are_integers_in_sqlite() {
        let conn = sqlite_schema();
        let mut booleans = vec![];
        for sql in crate::migrations::MIGRATIONS.iter().map(|m| m.postgres) {
            let mut table = String::new();
            for line in sql.lines() {
                let line = line.trim();
                if let Some(rest) = line.strip_prefix("CREATE TABLE ") {
                    table = rest.split_whitespace().next().unwrap().to_owned();
                } else if let Some(rest) = line.strip_prefix("ALTER TABLE ") {
                    let mut words = rest.split_whitespace();
                    table = words.next().unwrap().to_owned();
                    let column = words.nth(2).unwrap_or_default();
                    if rest.contains(" BOOLEAN ") {
                        booleans.push((table.clone(), column.to_owned()));
                    }
                } else if line.split_whitespace().nth(1) == Some("BOOLEAN") && !table.starts_with("cluster_") {
                    booleans.push((table.clone(), line.split_whitespace().next().unwrap().to_owned()));
                }
            }
        }
        booleans.sort();
        let expected = [
            ("applications", "backchannel_logout_session_required"),
            ("applications", "device_flow"),
            ("applications", "require_dpop"),
            ("applications", "require_par"),
            ("credentials", "backed_up"),
            ("credentials", "backup_eligible"),
            ("refresh_tokens", "offline"),
            ("social_providers", "create_users"),
            ("users", "email_verified"),
        ];
        assert_eq!(booleans, expected.map(|(t, c)| (t.to_owned(), c.to_owned())));
        for (table, column) in expected {
            let ty: String = conn
                .query_row(&format!("SELECT type FROM pragma_table_info('{table}') WHERE name = '{column}'"), [], |r| {
                    r.get(0)
                })
                .unwrap();
            assert_eq!(ty, "INTEGER", "{table}.{column}");
        }
    }

    #[test]
    fn values_convert_to_the_postgres_type_or_say_why_not() {
        assert_eq!(convert(Kind::Bool, SqliteRef::Integer(1)), Ok(Value::Bool(true)));
        assert_eq!(convert(Kind::Bool, SqliteRef::Integer(0)), Ok(Value::Bool(false)));
        assert_eq!(convert(Kind::Bool, SqliteRef::Null), Ok(Value::Null));
        assert!(convert(Kind::Bool, SqliteRef::Integer(2)).unwrap_err().contains("0 or 1"));
        assert_eq!(convert(Kind::Int, SqliteRef::Integer(-7)), Ok(Value::Int(-7)));
        assert!(convert(Kind::Int, SqliteRef::Text(b"7")).unwrap_err().contains("wants an integer"));
        assert_eq!(convert(Kind::Text, SqliteRef::Text(b"a")), Ok(Value::Text("a")));
        assert!(convert(Kind::Text, SqliteRef::Text(&[0xff])).unwrap_err().contains("not UTF-8"));
        assert_eq!(convert(Kind::Bytes, SqliteRef::Blob(&[0, 1])), Ok(Value::Blob(&[0, 1])));
        assert!(convert(Kind::Bytes, SqliteRef::Real(1.5)).unwrap_err().contains("real"));
    }
}
