//! The façade's values on the PostgreSQL wire. Parameter types are what the server inferred when
//! it prepared the statement (a BIGINT column makes `$1` an INT8), so binding checks each value
//! against that type by hand: one `Value` type binds to many SQL types, which `ToSql::accepts`
//! (a per-Rust-type answer) cannot express.
//!
//! Through a transaction pooler nothing is prepared, so the server has inferred no type before a
//! statement runs: each value is sent with the type of its kind ([`Value::declared_type`]).

use std::error::Error;
use std::sync::OnceLock;

use bytes::BytesMut;
use postgres::types::{FromSql, IsNull, Kind, ToSql, Type};

use crate::StoreError;
use crate::sql::{RowAccess, Value, ValueRef};

type BoxError = Box<dyn Error + Sync + Send>;

/// The text types a `Value::Text` binds to and a `ValueRef::Text` is read from.
fn is_text(ty: &Type) -> bool {
    <&str as FromSql>::accepts(ty)
}

impl Value<'_> {
    fn fits(&self, ty: &Type) -> bool {
        match self {
            Value::Null => true,
            Value::Int(_) => matches!(*ty, Type::INT8 | Type::INT4 | Type::INT2),
            Value::Text(_) => is_text(ty),
            Value::Blob(_) => *ty == Type::BYTEA,
            Value::Bool(_) => *ty == Type::BOOL,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Text(_) => "text",
            Value::Blob(_) => "a blob",
            Value::Bool(_) => "a boolean",
        }
    }
}

impl ToSql for Value<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match *self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT4 => i32::try_from(i).map_err(|_| format!("{i} is out of range for INT4"))?.to_sql(ty, out),
                Type::INT2 => i16::try_from(i).map_err(|_| format!("{i} is out of range for INT2"))?.to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            Value::Text(t) => t.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
            Value::Bool(b) => b.to_sql(ty, out),
        }
    }

    /// Every type may be asked for; `to_sql_checked` decides per value.
    fn accepts(_: &Type) -> bool {
        true
    }

    fn to_sql_checked(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        if !self.fits(ty) {
            return Err(format!("cannot bind {} to a parameter of type {ty}", self.kind()).into());
        }
        self.to_sql(ty, out)
    }
}

impl Value<'_> {
    /// The type a value is declared as when nothing is prepared, so the server has inferred
    /// nothing (see the module's note). The server converts it where the statement needs another
    /// type and a conversion is allowed (an INT8 into an INTEGER column, checked for range), and
    /// refuses it where none is (text into a BIGINT column), as binding does to a prepared
    /// statement. A NULL is left to the server to type.
    pub fn declared_type(&self) -> Type {
        static UNSPECIFIED: OnceLock<Type> = OnceLock::new();
        match self {
            Value::Null => UNSPECIFIED
                .get_or_init(|| Type::new("unspecified".into(), 0, Kind::Pseudo, "pg_catalog".into()))
                .clone(),
            Value::Int(_) => Type::INT8,
            Value::Text(_) => Type::TEXT,
            Value::Blob(_) => Type::BYTEA,
            Value::Bool(_) => Type::BOOL,
        }
    }
}

impl<'a> FromSql<'a> for ValueRef<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<ValueRef<'a>, BoxError> {
        Ok(match *ty {
            Type::INT8 => ValueRef::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => ValueRef::Int(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT2 => ValueRef::Int(i64::from(i16::from_sql(ty, raw)?)),
            Type::BOOL => ValueRef::Bool(bool::from_sql(ty, raw)?),
            Type::BYTEA => ValueRef::Blob(<&[u8]>::from_sql(ty, raw)?),
            _ => ValueRef::Text(<&str>::from_sql(ty, raw)?),
        })
    }

    fn from_sql_null(_: &Type) -> Result<ValueRef<'a>, BoxError> {
        Ok(ValueRef::Null)
    }

    fn accepts(ty: &Type) -> bool {
        matches!(*ty, Type::INT8 | Type::INT4 | Type::INT2 | Type::BOOL | Type::BYTEA) || is_text(ty)
    }
}

/// A PostgreSQL row read through the façade. A column of a type the façade has no value for
/// (NUMERIC, TIMESTAMPTZ …) is an error naming it: cast it in the SQL.
impl RowAccess for postgres::Row {
    fn value(&self, i: usize) -> Result<ValueRef<'_>, StoreError> {
        Ok(self.try_get::<_, ValueRef<'_>>(i)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(v: Value<'_>, ty: &Type) -> Result<Option<Vec<u8>>, String> {
        let mut out = BytesMut::new();
        match v.to_sql_checked(ty, &mut out).map_err(|e| e.to_string())? {
            IsNull::Yes => Ok(None),
            IsNull::No => Ok(Some(out.to_vec())),
        }
    }

    #[test]
    fn values_bind_to_the_types_they_fit() {
        assert_eq!(bind(Value::Int(7), &Type::INT8).unwrap(), Some(7i64.to_be_bytes().to_vec()));
        assert_eq!(bind(Value::Int(7), &Type::INT4).unwrap(), Some(7i32.to_be_bytes().to_vec()));
        assert_eq!(bind(Value::Int(-2), &Type::INT2).unwrap(), Some((-2i16).to_be_bytes().to_vec()));
        assert!(bind(Value::Int(1 << 40), &Type::INT4).unwrap_err().contains("out of range for INT4"));
        assert!(bind(Value::Int(1 << 20), &Type::INT2).unwrap_err().contains("out of range for INT2"));
        assert!(bind(Value::Int(1), &Type::OID).unwrap_err().contains("cannot bind an integer"));
        for ty in [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME] {
            assert_eq!(bind(Value::Text("é"), &ty).unwrap(), Some("é".as_bytes().to_vec()), "{ty}");
        }
        assert!(bind(Value::Text("1"), &Type::INT8).unwrap_err().contains("cannot bind text"));
        assert_eq!(bind(Value::Blob(&[0, 1]), &Type::BYTEA).unwrap(), Some(vec![0, 1]));
        assert!(bind(Value::Blob(&[0]), &Type::TEXT).is_err());
        assert_eq!(bind(Value::Bool(true), &Type::BOOL).unwrap(), Some(vec![1]));
        assert!(bind(Value::Bool(true), &Type::INT8).unwrap_err().contains("cannot bind a boolean"));
        for ty in [Type::INT8, Type::TEXT, Type::BYTEA, Type::BOOL, Type::TIMESTAMPTZ] {
            assert_eq!(bind(Value::Null, &ty).unwrap(), None);
        }
    }

    #[test]
    fn values_declare_the_type_of_their_kind() {
        assert_eq!(Value::Int(1).declared_type(), Type::INT8);
        assert_eq!(Value::Text("t").declared_type(), Type::TEXT);
        assert_eq!(Value::Blob(&[1]).declared_type(), Type::BYTEA);
        assert_eq!(Value::Bool(true).declared_type(), Type::BOOL);
        assert_eq!(Value::Null.declared_type().oid(), 0);
        for v in [Value::Int(1), Value::Text("t"), Value::Blob(&[1]), Value::Bool(false), Value::Null] {
            assert!(bind(v, &v.declared_type()).is_ok(), "{v:?}");
        }
    }

    #[test]
    fn values_are_read_from_the_wire() {
        let read = |ty: &Type, raw: &'static [u8]| ValueRef::from_sql(ty, raw).unwrap();
        assert_eq!(read(&Type::INT8, &[0, 0, 0, 0, 0, 0, 1, 0]), ValueRef::Int(256));
        assert_eq!(read(&Type::INT4, &[255, 255, 255, 255]), ValueRef::Int(-1));
        assert_eq!(read(&Type::INT2, &[0, 9]), ValueRef::Int(9));
        assert_eq!(read(&Type::BOOL, &[0]), ValueRef::Bool(false));
        assert_eq!(read(&Type::BYTEA, &[1, 2]), ValueRef::Blob(&[1, 2]));
        assert_eq!(read(&Type::TEXT, b"abc"), ValueRef::Text("abc"));
        assert_eq!(read(&Type::NAME, b"n"), ValueRef::Text("n"));
        assert_eq!(ValueRef::from_sql_null(&Type::INT8).unwrap(), ValueRef::Null);
        assert!(<ValueRef<'_> as FromSql>::accepts(&Type::VARCHAR));
        assert!(!<ValueRef<'_> as FromSql>::accepts(&Type::NUMERIC));
        assert!(!<ValueRef<'_> as FromSql>::accepts(&Type::TIMESTAMPTZ));
    }
}
