//! An open PostgreSQL transaction behind the store's [`Conn`] trait, or a connection whose
//! statements each commit on their own (no `START TRANSACTION` and `COMMIT` round trips: see
//! [`super::PgDb::each_blocking`]).
//!
//! `postgres::Transaction` wants `&mut self` for every statement while the store hands
//! transactions around as `&dyn Conn`, hence the `RefCell`s. A query collects its rows before
//! the caller's closure sees them, so the closure may run statements of its own (as SQLite
//! allows) without meeting a borrowed cell.

use std::cell::{RefCell, RefMut};

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{ToSql, Type};
use postgres::{Client, Statement, Transaction};

use super::manager::{Prepared, StatementCache};
use super::rewrite;
use crate::StoreError;
use crate::app_cache::{AppCache, Change};
use crate::sql::{Conn, Engine, Row, ToValue, Value};

/// Where a [`PgTx`]'s statements go.
enum Session<'c> {
    /// An explicit transaction, ended by [`PgTx::commit`] or [`PgTx::rollback`] (rolled back if
    /// dropped).
    Tx(Transaction<'c>),
    /// No transaction: each statement commits on its own. `left` is how many statements may
    /// still run (`None`: any number): a write meant to be one statement cannot become two.
    /// `answered`: a statement failed with an answer from the server or a pooler, not on a
    /// connection closed without one ([`super::unanswered`]; how long that took is for
    /// [`super::PgDb::each_blocking`] to weigh).
    Each { client: &'c mut Client, left: Option<u32>, answered: bool },
}

impl Session<'_> {
    /// Notes a failure the server or a pooler answered (see `answered`), and converts it.
    fn seen<T>(&mut self, r: Result<T, postgres::Error>) -> Result<T, StoreError> {
        if let (Err(e), Session::Each { answered, .. }) = (&r, &mut *self)
            && !super::unanswered(e)
        {
            *answered = true;
        }
        Ok(r?)
    }

    fn prepare(&mut self, sql: &str) -> Result<Statement, StoreError> {
        let r = match self {
            Session::Tx(tx) => tx.prepare(sql),
            Session::Each { client, .. } => client.prepare(sql),
        };
        self.seen(r)
    }

    /// Counts a statement against the bound; fails once it is spent.
    fn take_one(&mut self) -> Result<(), StoreError> {
        match self {
            Session::Each { left: Some(0), .. } => {
                Err(StoreError::Task("a single-statement write ran a second statement".into()))
            }
            Session::Each { left: Some(n), .. } => {
                *n -= 1;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn execute(&mut self, stmt: &Prepared, values: &[Value<'_>]) -> Result<u64, StoreError> {
        self.take_one()?;
        let r = match stmt {
            Prepared::Named(stmt) => {
                let params = refs(values);
                match self {
                    Session::Tx(tx) => tx.execute(stmt, &params),
                    Session::Each { client, .. } => client.execute(stmt, &params),
                }
            }
            Prepared::Unnamed(sql) => {
                let params = typed(values);
                match self {
                    Session::Tx(tx) => tx.execute_typed(sql, &params),
                    Session::Each { client, .. } => client.execute_typed(sql, &params),
                }
            }
        };
        self.seen(r)
    }

    fn query(&mut self, stmt: &Prepared, values: &[Value<'_>]) -> Result<Vec<postgres::Row>, StoreError> {
        self.take_one()?;
        let r = match stmt {
            Prepared::Named(stmt) => {
                let params = refs(values);
                match self {
                    Session::Tx(tx) => tx.query(stmt, &params),
                    Session::Each { client, .. } => client.query(stmt, &params),
                }
            }
            // One round trip as a named statement's is: parse, bind, describe, execute, sync.
            Prepared::Unnamed(sql) => {
                let params = values.iter().map(|v| (v as &(dyn ToSql + Sync), v.declared_type()));
                match self {
                    Session::Tx(tx) => tx.query_typed_raw(sql, params).and_then(|rows| rows.collect()),
                    Session::Each { client, .. } => client.query_typed_raw(sql, params).and_then(|rows| rows.collect()),
                }
            }
        };
        self.seen(r)
    }

    fn batch_execute(&mut self, sql: &str) -> Result<(), StoreError> {
        self.take_one()?;
        let r = match self {
            Session::Tx(tx) => tx.batch_execute(sql),
            Session::Each { client, .. } => client.batch_execute(sql),
        };
        self.seen(r)
    }
}

pub struct PgTx<'c> {
    session: RefCell<Session<'c>>,
    stmts: RefCell<&'c mut StatementCache>,
    apps: &'c AppCache,
    /// The change to applications or tenants this transaction has begun, if any; its owner
    /// drops it once the transaction has ended.
    change: &'c RefCell<Option<Change>>,
}

impl<'c> PgTx<'c> {
    pub(crate) fn new(
        tx: Transaction<'c>,
        stmts: &'c mut StatementCache,
        apps: &'c AppCache,
        change: &'c RefCell<Option<Change>>,
    ) -> PgTx<'c> {
        PgTx { session: RefCell::new(Session::Tx(tx)), stmts: RefCell::new(stmts), apps, change }
    }

    /// Statements on `client` outside any transaction, at most `limit` of them.
    pub(crate) fn each(
        client: &'c mut Client,
        limit: Option<u32>,
        stmts: &'c mut StatementCache,
        apps: &'c AppCache,
        change: &'c RefCell<Option<Change>>,
    ) -> PgTx<'c> {
        PgTx {
            session: RefCell::new(Session::Each { client, left: limit, answered: false }),
            stmts: RefCell::new(stmts),
            apps,
            change,
        }
    }

    /// Whether a statement outside a transaction failed with an answer from the server or a
    /// pooler, rather than on a connection closed without one.
    pub(crate) fn answered(&self) -> bool {
        self.session.try_borrow().is_ok_and(|s| matches!(&*s, Session::Each { answered: true, .. }))
    }

    /// Commits the transaction (nothing to do for statements that committed on their own).
    pub(crate) fn commit(self) -> Result<(), StoreError> {
        match self.session.into_inner() {
            Session::Tx(tx) => Ok(tx.commit()?),
            Session::Each { .. } => Ok(()),
        }
    }

    pub(crate) fn rollback(self) -> Result<(), StoreError> {
        match self.session.into_inner() {
            Session::Tx(tx) => Ok(tx.rollback()?),
            Session::Each { .. } => Ok(()),
        }
    }

    fn tx(&self) -> Result<RefMut<'_, Session<'c>>, StoreError> {
        self.session.try_borrow_mut().map_err(|_| StoreError::Task("a statement ran inside another statement".into()))
    }

    /// The statement for `sql`: prepared (after the placeholder rewrite) on a miss, or only
    /// rewritten when statements go unnamed.
    fn statement(&self, tx: &mut Session<'c>, sql: &str) -> Result<Prepared, StoreError> {
        let mut stmts = self.stmts.try_borrow_mut().map_err(|_| StoreError::Task("statement cache in use".into()))?;
        if let Some(stmt) = stmts.get(sql) {
            return Ok(stmt);
        }
        let text = rewrite::placeholders(sql);
        let stmt = if stmts.unnamed { Prepared::Unnamed(text.into()) } else { Prepared::Named(tx.prepare(&text)?) };
        stmts.insert(sql, stmt.clone());
        Ok(stmt)
    }
}

fn values<'p>(params: &'p [&'p dyn ToValue]) -> Vec<Value<'p>> {
    params.iter().map(|p| p.to_value()).collect()
}

fn refs<'v>(values: &'v [Value<'v>]) -> Vec<&'v (dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

/// Each value with the type it is declared as (nothing prepared: [`Value::declared_type`]).
fn typed<'v>(values: &'v [Value<'v>]) -> Vec<(&'v (dyn ToSql + Sync), Type)> {
    values.iter().map(|v| (v as &(dyn ToSql + Sync), v.declared_type())).collect()
}

impl Conn for PgTx<'_> {
    fn engine(&self) -> Engine {
        Engine::Postgres
    }

    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<usize, StoreError> {
        let mut tx = self.tx()?;
        let stmt = self.statement(&mut tx, sql)?;
        let n = tx.execute(&stmt, &values(params))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn query(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        each: &mut dyn FnMut(&Row<'_>) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let rows = {
            let mut tx = self.tx()?;
            let stmt = self.statement(&mut tx, sql)?;
            tx.query(&stmt, &values(params))?
        };
        for row in &rows {
            if !each(&Row::new(row))? {
                break;
            }
        }
        Ok(())
    }

    fn batch(&self, sql: &str) -> Result<(), StoreError> {
        self.tx()?.batch_execute(sql)
    }

    fn changing_cached_state(&self) {
        if let Ok(mut change) = self.change.try_borrow_mut()
            && change.is_none()
        {
            *change = Some(self.apps.changes().begin());
        }
    }
}
