//! The connection pool's manager: our own rather than r2d2_postgres, because each connection
//! carries its prepared statements and is set up for a daemon's session on connect.

use std::collections::HashMap;
use std::sync::Arc;

use postgres::Statement;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::config::Pooler;

/// What every pooled session runs first. The bounds turn a stuck statement, a lock queue or a
/// transaction left open by a bug into an error instead of a pool that silently runs dry:
/// no store statement comes near 30 s, and an admin write waits at most 10 s for a row lock.
/// (`application_name` is a startup parameter: see `PgTarget`.)
pub const SESSION_BOUNDS: [(&str, &str); 3] =
    [("statement_timeout", "30s"), ("idle_in_transaction_session_timeout", "60s"), ("lock_timeout", "10s")];

/// What a session of its own runs first, past any pooler: none of [`SESSION_BOUNDS`], even when
/// the role carries them (as it does behind a transaction pooler, docs/scaling.md). A migration
/// may run for minutes and wait for another node's; `migrate-store` copies for as long as it
/// takes.
pub fn clear_bounds(client: &mut postgres::Client) -> Result<(), postgres::Error> {
    let clear: Vec<String> = SESSION_BOUNDS.iter().map(|(name, _)| format!("SET {name} = 0")).collect();
    client.batch_execute(&clear.join("; "))
}

/// Statements kept per connection. The store has about a hundred texts; a bound keeps a text
/// built from data (which the store does not do) from growing the cache without end.
const MAX_STATEMENTS: usize = 512;

/// A pooled connection with its statements, keyed by the store's source text (`?N`).
pub struct PgConn {
    pub(crate) client: postgres::Client,
    pub(crate) stmts: StatementCache,
}

/// A statement as a connection sends it.
#[derive(Clone)]
pub enum Prepared {
    /// Prepared once on the connection's server session, then run by name.
    Named(Statement),
    /// Sent whole every time it runs (through a transaction pooler, [`Pooler::Transaction`]):
    /// the text with PostgreSQL's `$N` placeholders, rewritten once.
    Unnamed(Arc<str>),
}

#[derive(Default)]
pub struct StatementCache {
    stmts: HashMap<String, Prepared>,
    /// Whether statements are sent [`Prepared::Unnamed`].
    pub(crate) unnamed: bool,
}

impl StatementCache {
    pub fn get(&self, sql: &str) -> Option<Prepared> {
        self.stmts.get(sql).cloned()
    }

    pub fn insert(&mut self, sql: &str, stmt: Prepared) {
        if self.stmts.len() >= MAX_STATEMENTS {
            self.stmts.clear();
        }
        self.stmts.insert(sql.to_owned(), stmt);
    }
}

#[derive(Clone)]
pub struct PgManager {
    pub(crate) config: postgres::Config,
    pub(crate) tls: MakeRustlsConnect,
    pub(crate) pooler: Pooler,
}

impl PgManager {
    /// A session of its own, without time bounds ([`clear_bounds`]).
    pub fn connect_plain(&self) -> Result<postgres::Client, postgres::Error> {
        let mut client = self.config.connect(self.tls.clone())?;
        clear_bounds(&mut client)?;
        Ok(client)
    }
}

impl r2d2::ManageConnection for PgManager {
    type Connection = PgConn;
    type Error = postgres::Error;

    /// Through a transaction pooler a session setting would stay on whichever server connection
    /// ran it, for the next client of the pooler: the role's settings bound statements there.
    fn connect(&self) -> Result<PgConn, postgres::Error> {
        let mut client = self.config.connect(self.tls.clone())?;
        let unnamed = self.pooler == Pooler::Transaction;
        if !unnamed {
            let setup: Vec<String> =
                SESSION_BOUNDS.iter().map(|(name, value)| format!("SET {name} = '{value}'")).collect();
            client.batch_execute(&setup.join("; "))?;
        }
        Ok(PgConn { client, stmts: StatementCache { unnamed, ..StatementCache::default() } })
    }

    /// An empty query: one round trip, no parse, no plan.
    fn is_valid(&self, conn: &mut PgConn) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(|_| ())
    }

    fn has_broken(&self, conn: &mut PgConn) -> bool {
        conn.client.is_closed()
    }
}
