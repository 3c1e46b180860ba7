//! The store's façade over its two engines, SQLite and PostgreSQL.
//!
//! The table modules write one SQL text per statement in the dialect both engines share (with
//! `?1, ?2 …` placeholders), bind engine-neutral [`Value`]s and read rows through [`Row::get`].
//! An engine is whatever implements [`Conn`] for an open transaction: SQLite's
//! `rusqlite::Connection` (below) and PostgreSQL's transaction wrapper (`store::pg`). The trait is
//! object-safe, so a transaction is a `&dyn Conn` and the table modules never name an engine; a
//! virtual call costs nothing beside a statement.

use super::StoreError;

/// Which engine a [`Conn`] talks to, for the rare statement whose text must differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// A bound parameter. Booleans stay booleans: INTEGER 0/1 on SQLite, BOOLEAN on PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    Blob(&'a [u8]),
    Bool(bool),
}

/// A value read from a row, from either engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    Blob(&'a [u8]),
    Bool(bool),
}

impl ValueRef<'_> {
    /// What the value is, for error messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            ValueRef::Null => "NULL",
            ValueRef::Int(_) => "an integer",
            ValueRef::Text(_) => "text",
            ValueRef::Blob(_) => "a blob",
            ValueRef::Bool(_) => "a boolean",
        }
    }
}

/// What a value of this type binds as.
pub trait ToValue {
    fn to_value(&self) -> Value<'_>;
}

/// How a value of this type is read from a column.
pub trait FromValue: Sized {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError>;
}

fn mismatch<T>(wanted: &str, got: ValueRef<'_>) -> Result<T, StoreError> {
    Err(StoreError::Corrupt(format!("expected {wanted}, found {}", got.kind())))
}

impl ToValue for i64 {
    fn to_value(&self) -> Value<'_> {
        Value::Int(*self)
    }
}

impl ToValue for i32 {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

/// Every integer binds as a 64-bit integer (BIGINT on PostgreSQL, where a u32 would otherwise
/// mean an OID).
impl ToValue for u32 {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

/// Counts and times beyond `i64::MAX` do not occur; saturating keeps binding infallible.
impl ToValue for u64 {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl ToValue for usize {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value<'_> {
        Value::Bool(*self)
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl<const N: usize> ToValue for [u8; N] {
    fn to_value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value<'_> {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value<'_> {
        match self {
            Some(v) => v.to_value(),
            None => Value::Null,
        }
    }
}

impl ToValue for Value<'_> {
    fn to_value(&self) -> Value<'_> {
        *self
    }
}

impl FromValue for i64 {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        match v {
            ValueRef::Int(i) => Ok(i),
            other => mismatch("an integer", other),
        }
    }
}

fn checked<T: TryFrom<i64>>(v: ValueRef<'_>, wanted: &str) -> Result<T, StoreError> {
    let i = i64::from_value(v)?;
    T::try_from(i).map_err(|_| StoreError::Corrupt(format!("{i} is out of range for {wanted}")))
}

impl FromValue for u32 {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        checked(v, "a 32-bit unsigned integer")
    }
}

impl FromValue for u64 {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        checked(v, "an unsigned integer")
    }
}

impl FromValue for usize {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        checked(v, "an unsigned integer")
    }
}

/// SQLite has no boolean type: its columns hold 0 or 1.
impl FromValue for bool {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        match v {
            ValueRef::Bool(b) => Ok(b),
            ValueRef::Int(0) => Ok(false),
            ValueRef::Int(1) => Ok(true),
            other => mismatch("a boolean", other),
        }
    }
}

impl FromValue for String {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        match v {
            ValueRef::Text(t) => Ok(t.to_owned()),
            other => mismatch("text", other),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        match v {
            ValueRef::Blob(b) => Ok(b.to_vec()),
            other => mismatch("a blob", other),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: ValueRef<'_>) -> Result<Self, StoreError> {
        match v {
            ValueRef::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// One row as an engine gives it.
pub trait RowAccess {
    fn value(&self, i: usize) -> Result<ValueRef<'_>, StoreError>;
}

/// A column index. Only `usize` implements it, so `row.get(0)` infers the literal's type, as
/// with rusqlite.
pub trait RowIndex {
    fn index(self) -> usize;
}

impl RowIndex for usize {
    fn index(self) -> usize {
        self
    }
}

/// A row of a query's result.
pub struct Row<'r>(&'r dyn RowAccess);

impl<'r> Row<'r> {
    pub fn new(r: &'r dyn RowAccess) -> Row<'r> {
        Row(r)
    }

    /// The value of column `i` as a `T`; a value of another type is [`StoreError::Corrupt`],
    /// naming the column.
    pub fn get<I: RowIndex, T: FromValue>(&self, i: I) -> Result<T, StoreError> {
        let i = i.index();
        T::from_value(self.0.value(i)?).map_err(|e| match e {
            StoreError::Corrupt(m) => StoreError::Corrupt(format!("column {i}: {m}")),
            other => other,
        })
    }

    /// Whether column `i` is NULL, without converting (or copying) its value: how a joined row
    /// tells a missing side of a `LEFT JOIN` from a present one.
    pub fn is_null<I: RowIndex>(&self, i: I) -> Result<bool, StoreError> {
        Ok(matches!(self.0.value(i.index())?, ValueRef::Null))
    }
}

/// An open transaction on either engine. SQL texts use `?1, ?2 …` placeholders; each engine
/// prepares a text once per connection and keeps the prepared statement.
pub trait Conn {
    fn engine(&self) -> Engine;
    /// Runs a statement; the number of rows it changed.
    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<usize, StoreError>;
    /// Runs a query and calls `each` for every row, in order, until `each` answers `Ok(false)` or
    /// fails.
    fn query(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        each: &mut dyn FnMut(&Row<'_>) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError>;
    /// Runs `;`-separated statements without parameters (savepoints, test fixtures).
    fn batch(&self, sql: &str) -> Result<(), StoreError>;
    /// Runs an `INSERT` of one row whose text ends in `RETURNING id`: the new row's id, or `None`
    /// when it inserted nothing (`ON CONFLICT … DO NOTHING`).
    fn insert_id(&self, sql: &str, params: &[&dyn ToValue]) -> Result<Option<i64>, StoreError> {
        returned_id(self, sql, params)
    }
    /// This transaction changes applications or tenants, which nodes keep in memory: on
    /// PostgreSQL it begins a change on the application cache (`super::app_cache`), ended
    /// after the transaction. SQLite's writer learns of such changes from its update hook.
    fn changing_cached_state(&self) {}
}

/// The first column of the first row a statement returns, as an id.
fn returned_id<C: Conn + ?Sized>(conn: &C, sql: &str, params: &[&dyn ToValue]) -> Result<Option<i64>, StoreError> {
    let mut id = None;
    conn.query(sql, params, &mut |row| {
        id = Some(row.get(0)?);
        Ok(false)
    })?;
    Ok(id)
}

/// A table's column list (`"a, b, c"`) with each column prefixed by the table's alias in a join
/// (`"u.a, u.b, u.c"`).
pub fn qualified(alias: &str, columns: &str) -> String {
    columns.split(", ").map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ")
}

/// The usual shapes of a query, on any [`Conn`] (including `&dyn Conn`).
pub trait ConnExt: Conn {
    /// The first row, if any.
    fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        f: impl FnOnce(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let mut f = Some(f);
        let mut out = None;
        self.query(sql, params, &mut |row| {
            if let Some(f) = f.take() {
                out = Some(f(row)?);
            }
            Ok(false)
        })?;
        Ok(out)
    }

    /// The first row, which must exist (an aggregate, `RETURNING` of an insert).
    fn query_one<T>(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        f: impl FnOnce(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.query_opt(sql, params, f)?.ok_or_else(|| StoreError::NoRow(first_words(sql)))
    }

    /// Every row, in order.
    fn query_all<T>(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        mut f: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut out = Vec::new();
        self.query(sql, params, &mut |row| {
            out.push(f(row)?);
            Ok(true)
        })?;
        Ok(out)
    }

    /// The rows of a one-to-many `LEFT JOIN` folded into the one (read from the first row by
    /// `one`) and its many (one per row where `many` finds one: `None` when the join matched
    /// nothing and those columns are NULL). `None` when there is no row at all.
    fn query_one_with_many<O, M>(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        one: impl Fn(&Row<'_>) -> Result<O, StoreError>,
        many: impl Fn(&Row<'_>) -> Result<Option<M>, StoreError>,
    ) -> Result<Option<(O, Vec<M>)>, StoreError> {
        let mut found: Option<(O, Vec<M>)> = None;
        self.query(sql, params, &mut |row| {
            let (_, all) = match &mut found {
                Some(found) => found,
                None => found.insert((one(row)?, Vec::new())),
            };
            all.extend(many(row)?);
            Ok(true)
        })?;
        Ok(found)
    }
}

impl<C: Conn + ?Sized> ConnExt for C {}

/// The start of a statement, to name it in an error without the whole text.
fn first_words(sql: &str) -> String {
    sql.split_whitespace().take(6).collect::<Vec<_>>().join(" ")
}

/// `params![a, b]`: the parameters of a statement, as `&[&dyn ToValue]`.
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::sql::ToValue]
    };
    ($($p:expr),+ $(,)?) => {
        &[$(&$p as &dyn $crate::sql::ToValue),+] as &[&dyn $crate::sql::ToValue]
    };
}
pub(crate) use params;

// ---- SQLite ---------------------------------------------------------------------------------

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef as Sq};
        Ok(ToSqlOutput::Borrowed(match *self {
            Value::Null => Sq::Null,
            Value::Int(i) => Sq::Integer(i),
            Value::Text(t) => Sq::Text(t.as_bytes()),
            Value::Blob(b) => Sq::Blob(b),
            Value::Bool(b) => Sq::Integer(i64::from(b)),
        }))
    }
}

fn bind<'p>(params: &'p [&'p dyn ToValue]) -> impl Iterator<Item = Value<'p>> + 'p {
    params.iter().map(|p| p.to_value())
}

impl RowAccess for rusqlite::Row<'_> {
    fn value(&self, i: usize) -> Result<ValueRef<'_>, StoreError> {
        use rusqlite::types::ValueRef as Sq;
        Ok(match self.get_ref(i)? {
            Sq::Null => ValueRef::Null,
            Sq::Integer(n) => ValueRef::Int(n),
            Sq::Text(t) => ValueRef::Text(
                std::str::from_utf8(t).map_err(|e| StoreError::Corrupt(format!("column {i}: not UTF-8: {e}")))?,
            ),
            Sq::Blob(b) => ValueRef::Blob(b),
            Sq::Real(_) => return Err(StoreError::Corrupt(format!("column {i}: unexpected REAL value"))),
        })
    }
}

/// A SQLite connection inside a transaction (a `rusqlite::Transaction` derefs to it).
impl Conn for rusqlite::Connection {
    fn engine(&self) -> Engine {
        Engine::Sqlite
    }

    fn execute(&self, sql: &str, params: &[&dyn ToValue]) -> Result<usize, StoreError> {
        Ok(self.prepare_cached(sql)?.execute(rusqlite::params_from_iter(bind(params)))?)
    }

    fn query(
        &self,
        sql: &str,
        params: &[&dyn ToValue],
        each: &mut dyn FnMut(&Row<'_>) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(bind(params)))?;
        while let Some(row) = rows.next()? {
            if !each(&Row::new(row))? {
                break;
            }
        }
        Ok(())
    }

    fn batch(&self, sql: &str) -> Result<(), StoreError> {
        Ok(self.execute_batch(sql)?)
    }

    fn insert_id(&self, sql: &str, params: &[&dyn ToValue]) -> Result<Option<i64>, StoreError> {
        // SQLite carries out `RETURNING` with a temporary trigger that fills an ephemeral table:
        // a B-tree opened and closed per statement, and, the statement now writing twice, a
        // statement journal that copies every page it changes (inside the writer's savepoints,
        // to a temporary file once the savepoint's journal has spilled: a third of a bulk
        // import's time). The insert alone, then the connection's last rowid, costs neither. Every table
        // inserted into this way has `id INTEGER PRIMARY KEY` (the rowid) and no triggers.
        let Some(plain) = sql.trim_end().strip_suffix("RETURNING id") else {
            return returned_id(self, sql, params);
        };
        let inserted = self.prepare_cached(plain)?.execute(rusqlite::params_from_iter(bind(params)))?;
        Ok((inserted > 0).then(|| self.last_insert_rowid()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> rusqlite::Connection {
        let c = rusqlite::Connection::open_in_memory().expect("open");
        c.execute_batch("CREATE TABLE t (i INTEGER, s TEXT, b BLOB, f INTEGER)").expect("create");
        c
    }

    #[test]
    fn every_value_type_round_trips() {
        let c = conn();
        let db: &dyn Conn = &c;
        let blob = vec![0u8, 255, 7];
        let n =
            db.execute("INSERT INTO t VALUES (?1, ?2, ?3, ?4)", params![42u32, "text", blob, true]).expect("insert");
        assert_eq!(n, 1);
        db.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
            params![None::<i64>, None::<String>, None::<Vec<u8>>, false],
        )
        .expect("insert nulls");
        let rows = db
            .query_all("SELECT i, s, b, f FROM t ORDER BY i IS NULL", params![], |r| {
                Ok((
                    r.get::<_, Option<u32>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<Vec<u8>>>(2)?,
                    r.get::<_, bool>(3)?,
                ))
            })
            .expect("query");
        assert_eq!(rows, vec![(Some(42), Some("text".to_owned()), Some(blob), true), (None, None, None, false)]);
    }

    #[test]
    fn query_shapes() {
        let c = conn();
        let db: &dyn Conn = &c;
        for i in 0..3i64 {
            db.execute("INSERT INTO t (i) VALUES (?1)", params![i]).expect("insert");
        }
        let first = db.query_opt("SELECT i FROM t ORDER BY i", params![], |r| r.get::<_, i64>(0)).expect("opt");
        assert_eq!(first, Some(0));
        let none = db.query_opt("SELECT i FROM t WHERE i > ?1", params![9], |r| r.get::<_, i64>(0)).expect("opt");
        assert_eq!(none, None);
        let count: i64 = db.query_one("SELECT count(*) FROM t", params![], |r| r.get(0)).expect("one");
        assert_eq!(count, 3);
        let missing = db.query_one("SELECT i FROM t WHERE i > 9", params![], |r| r.get::<_, i64>(0));
        assert!(matches!(missing, Err(StoreError::NoRow(_))), "{missing:?}");
        let all = db.query_all("SELECT i FROM t ORDER BY i DESC", params![], |r| r.get::<_, i64>(0)).expect("all");
        assert_eq!(all, vec![2, 1, 0]);
    }

    #[test]
    fn insert_id_answers_the_new_rowid_or_none() {
        let c = rusqlite::Connection::open_in_memory().expect("open");
        c.execute_batch("CREATE TABLE u (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, v TEXT UNIQUE)")
            .expect("create");
        let db: &dyn Conn = &c;
        let sql = "INSERT INTO u (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO NOTHING RETURNING id";
        assert_eq!(db.insert_id(sql, params!["a", "1"]).expect("insert"), Some(1));
        assert_eq!(db.insert_id(sql, params!["b", "2"]).expect("insert"), Some(2));
        // Nothing inserted: no id, not the previous insert's.
        assert_eq!(db.insert_id(sql, params!["a", "3"]).expect("conflict"), None);
        // A clash the statement does not name is still an error.
        assert!(db.insert_id(sql, params!["c", "1"]).is_err());
        // Another RETURNING than the id: the statement as written.
        let k = "INSERT INTO u (k) VALUES (?1) RETURNING id + 100";
        assert_eq!(db.insert_id(k, params!["d"]).expect("insert"), Some(103));
        let n: i64 = db.query_one("SELECT count(*) FROM u", params![], |r| r.get(0)).expect("count");
        assert_eq!(n, 3);
    }

    #[test]
    fn a_value_of_the_wrong_type_is_corruption_naming_the_column() {
        let c = conn();
        let db: &dyn Conn = &c;
        db.execute("INSERT INTO t (i, s) VALUES (?1, ?2)", params![-1, "x"]).expect("insert");
        let e = db.query_one("SELECT i, s FROM t", params![], |r| r.get::<_, u32>(0)).expect_err("negative u32");
        assert!(matches!(&e, StoreError::Corrupt(m) if m.starts_with("column 0:")), "{e}");
        let e = db.query_one("SELECT i, s FROM t", params![], |r| r.get::<_, i64>(1)).expect_err("text as int");
        assert!(matches!(&e, StoreError::Corrupt(m) if m.contains("column 1") && m.contains("found text")), "{e}");
    }
}
