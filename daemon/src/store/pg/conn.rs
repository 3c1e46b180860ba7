//! An open PostgreSQL transaction behind the store's [`Conn`] trait.
//!
//! `postgres::Transaction` wants `&mut self` for every statement while the store hands
//! transactions around as `&dyn Conn`, hence the `RefCell`s. A query collects its rows before
//! the caller's closure sees them, so the closure may run statements of its own (as SQLite
//! allows) without meeting a borrowed cell.

use std::cell::{RefCell, RefMut};

use postgres::types::ToSql;
use postgres::{Statement, Transaction};

use super::manager::StatementCache;
use super::rewrite;
use crate::store::StoreError;
use crate::store::app_cache::{AppCache, Change};
use crate::store::sql::{Conn, Engine, Row, ToValue, Value};

pub struct PgTx<'c> {
    tx: RefCell<Transaction<'c>>,
    stmts: RefCell<&'c mut StatementCache>,
    apps: &'c AppCache,
    /// The change to applications or tenants this transaction has begun, if any; its owner
    /// drops it once the transaction has ended.
    change: &'c RefCell<Option<Change>>,
}

impl<'c> PgTx<'c> {
    pub(in crate::store) fn new(
        tx: Transaction<'c>,
        stmts: &'c mut StatementCache,
        apps: &'c AppCache,
        change: &'c RefCell<Option<Change>>,
    ) -> PgTx<'c> {
        PgTx { tx: RefCell::new(tx), stmts: RefCell::new(stmts), apps, change }
    }

    pub(crate) fn commit(self) -> Result<(), StoreError> {
        Ok(self.tx.into_inner().commit()?)
    }

    pub(crate) fn rollback(self) -> Result<(), StoreError> {
        Ok(self.tx.into_inner().rollback()?)
    }

    fn tx(&self) -> Result<RefMut<'_, Transaction<'c>>, StoreError> {
        self.tx.try_borrow_mut().map_err(|_| StoreError::Task("a statement ran inside another statement".into()))
    }

    /// The prepared statement for `sql`, prepared (after the placeholder rewrite) on a miss.
    fn statement(&self, tx: &mut Transaction<'c>, sql: &str) -> Result<Statement, StoreError> {
        let mut stmts = self.stmts.try_borrow_mut().map_err(|_| StoreError::Task("statement cache in use".into()))?;
        if let Some(stmt) = stmts.get(sql) {
            return Ok(stmt);
        }
        let stmt = tx.prepare(&rewrite::placeholders(sql))?;
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

impl Conn for PgTx<'_> {
    fn engine(&self) -> Engine {
        Engine::Postgres
    }

    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<usize, StoreError> {
        let mut tx = self.tx()?;
        let stmt = self.statement(&mut tx, sql)?;
        let values = values(params);
        let n = tx.execute(&stmt, &refs(&values))?;
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
            let values = values(params);
            tx.query(&stmt, &refs(&values))?
        };
        for row in &rows {
            if !each(&Row::new(row))? {
                break;
            }
        }
        Ok(())
    }

    fn batch(&self, sql: &str) -> Result<(), StoreError> {
        Ok(self.tx()?.batch_execute(sql)?)
    }

    fn changing_cached_state(&self) {
        if let Ok(mut change) = self.change.try_borrow_mut()
            && change.is_none()
        {
            *change = Some(self.apps.changes().begin());
        }
    }
}
