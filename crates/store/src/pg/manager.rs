//! The connection pool's manager: our own rather than r2d2_postgres, because each connection
//! carries its prepared statements and is set up for a daemon's session on connect.

use std::collections::HashMap;

use postgres::Statement;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What every pooled session runs first. The bounds turn a stuck statement, a lock queue or a
/// transaction left open by a bug into an error instead of a pool that silently runs dry:
/// no store statement comes near 30 s, and an admin write waits at most 10 s for a row lock.
/// (`application_name` is a startup parameter: see `PgTarget`.)
const SESSION_SETUP: &str = "SET statement_timeout = '30s'; \
                             SET idle_in_transaction_session_timeout = '60s'; \
                             SET lock_timeout = '10s'";

/// Statements kept per connection. The store has about a hundred texts; a bound keeps a text
/// built from data (which the store does not do) from growing the cache without end.
const MAX_STATEMENTS: usize = 512;

/// A pooled connection with its prepared statements, keyed by the store's source text (`?N`).
pub struct PgConn {
    pub(crate) client: postgres::Client,
    pub(crate) stmts: StatementCache,
}

#[derive(Default)]
pub struct StatementCache(HashMap<String, Statement>);

impl StatementCache {
    pub fn get(&self, sql: &str) -> Option<Statement> {
        self.0.get(sql).cloned()
    }

    pub fn insert(&mut self, sql: &str, stmt: Statement) {
        if self.0.len() >= MAX_STATEMENTS {
            self.0.clear();
        }
        self.0.insert(sql.to_owned(), stmt);
    }
}

#[derive(Clone)]
pub struct PgManager {
    pub(crate) config: postgres::Config,
    pub(crate) tls: MakeRustlsConnect,
}

impl PgManager {
    /// A connection without the session bounds: migrations may run longer than 30 s.
    pub fn connect_plain(&self) -> Result<postgres::Client, postgres::Error> {
        self.config.connect(self.tls.clone())
    }
}

impl r2d2::ManageConnection for PgManager {
    type Connection = PgConn;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PgConn, postgres::Error> {
        let mut client = self.connect_plain()?;
        client.batch_execute(SESSION_SETUP)?;
        Ok(PgConn { client, stmts: StatementCache::default() })
    }

    /// An empty query: one round trip, no parse, no plan.
    fn is_valid(&self, conn: &mut PgConn) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(|_| ())
    }

    fn has_broken(&self, conn: &mut PgConn) -> bool {
        conn.client.is_closed()
    }
}
