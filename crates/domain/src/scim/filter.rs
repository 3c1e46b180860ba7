//! SCIM filters (RFC 7644 §3.4.2.2) and PATCH paths (§3.5.2), parsed into a small tree and
//! evaluated over a resource's JSON form.
//!
//! Precedence: `not` binds tighter than `and`, which binds tighter than `or`; parentheses group.
//! Attribute names compare case-insensitively, with or without their schema URN. Strings compare
//! case-insensitively except `id` and `externalId` (caseExact in RFC 7643).

use serde_json::Value;

/// An attribute path: `userName`, `name.givenName`, `emails.value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrPath {
    /// Lower case, without the schema URN.
    pub attr: String,
    pub sub: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Co,
    Sw,
    Ew,
    Gt,
    Ge,
    Lt,
    Le,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    Present(AttrPath),
    Compare(AttrPath, Op, Value),
    /// `emails[type eq "work"]`: an element of the multi-valued attribute matches the inner filter.
    ValuePath(String, Box<Filter>),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Not(Box<Filter>),
}

/// A PATCH operation's target: `attr`, `attr.sub`, `attr[filter]` or `attr[filter].sub`, names
/// as written (they compare case-insensitively).
#[derive(Debug, Clone, PartialEq)]
pub struct PatchPath {
    pub attr: String,
    pub filter: Option<Filter>,
    pub sub: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Open,
    Close,
    OpenBracket,
    CloseBracket,
    Word(String),
    Str(String),
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let mut out = vec![];
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            '[' => {
                out.push(Token::OpenBracket);
                i += 1;
            }
            ']' => {
                out.push(Token::CloseBracket);
                i += 1;
            }
            '"' => {
                // A JSON string: find its end, honouring escapes, and let serde decode it.
                let start = i;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Err("a string is not closed".into());
                }
                i += 1;
                let literal: String = chars[start..i].iter().collect();
                let s: String = serde_json::from_str(&literal).map_err(|_| format!("bad string {literal}"))?;
                out.push(Token::Str(s));
            }
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !"()[]\"".contains(chars[i]) {
                    i += 1;
                }
                out.push(Token::Word(chars[start..i].iter().collect()));
            }
        }
    }
    Ok(out)
}

/// `urn:…:User:name.givenName` → `name`, `givenName` (lower case).
pub fn attr_path(word: &str) -> Result<AttrPath, String> {
    // A schema URN ends with the resource's name; the attribute follows the last colon.
    let plain =
        if word.to_ascii_lowercase().starts_with("urn:") { word.rsplit(':').next().unwrap_or(word) } else { word };
    let mut parts = plain.splitn(2, '.');
    let attr = parts.next().unwrap_or("").to_ascii_lowercase();
    let sub = parts.next().map(str::to_ascii_lowercase);
    let valid = |s: &str| {
        let mut c = s.chars();
        c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '$')
            && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == '-' || x == '$')
    };
    if !valid(&attr) || sub.as_deref().is_some_and(|s| !valid(s)) {
        return Err(format!("{word:?} is not an attribute path"));
    }
    Ok(AttrPath { attr, sub })
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(word))
    }

    fn or(&mut self) -> Result<Filter, String> {
        let mut left = self.and()?;
        while self.keyword("or") {
            self.at += 1;
            left = Filter::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Filter, String> {
        let mut left = self.not()?;
        while self.keyword("and") {
            self.at += 1;
            left = Filter::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Filter, String> {
        if self.keyword("not") {
            self.at += 1;
            if self.next() != Some(Token::Open) {
                return Err("`not` must be followed by a parenthesis".into());
            }
            let inner = self.or()?;
            if self.next() != Some(Token::Close) {
                return Err("a parenthesis is not closed".into());
            }
            return Ok(Filter::Not(Box::new(inner)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Filter, String> {
        match self.next() {
            Some(Token::Open) => {
                let inner = self.or()?;
                if self.next() != Some(Token::Close) {
                    return Err("a parenthesis is not closed".into());
                }
                Ok(inner)
            }
            Some(Token::Word(word)) => {
                let path = attr_path(&word)?;
                if self.peek() == Some(&Token::OpenBracket) {
                    self.at += 1;
                    let inner = self.or()?;
                    if self.next() != Some(Token::CloseBracket) {
                        return Err("a bracket is not closed".into());
                    }
                    return Ok(Filter::ValuePath(path.attr, Box::new(inner)));
                }
                let op = match self.next() {
                    Some(Token::Word(op)) => op.to_ascii_lowercase(),
                    _ => return Err(format!("an operator must follow {word}")),
                };
                let op = match op.as_str() {
                    "pr" => return Ok(Filter::Present(path)),
                    "eq" => Op::Eq,
                    "ne" => Op::Ne,
                    "co" => Op::Co,
                    "sw" => Op::Sw,
                    "ew" => Op::Ew,
                    "gt" => Op::Gt,
                    "ge" => Op::Ge,
                    "lt" => Op::Lt,
                    "le" => Op::Le,
                    other => {
                        return Err(format!("{other:?} is not an operator (eq, ne, co, sw, ew, gt, ge, lt, le, pr)"));
                    }
                };
                let value = match self.next() {
                    Some(Token::Str(s)) => Value::String(s),
                    Some(Token::Word(w)) => match w.as_str() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        "null" => Value::Null,
                        number => {
                            serde_json::from_str::<serde_json::Number>(number).map(Value::Number).map_err(|_| {
                                format!("{number:?} is not a value (a quoted string, number, true, false or null)")
                            })?
                        }
                    },
                    _ => return Err(format!("a value must follow {word} {op:?}")),
                };
                Ok(Filter::Compare(path, op, value))
            }
            Some(other) => Err(format!("unexpected {other:?}")),
            None => Err("the filter ends too soon".into()),
        }
    }
}

/// Parses a filter (`?filter=`), at most 1,000 characters.
pub fn parse(text: &str) -> Result<Filter, String> {
    if text.len() > 1000 {
        return Err("the filter is longer than 1,000 characters".into());
    }
    let mut p = Parser { tokens: tokens(text)?, at: 0 };
    let f = p.or()?;
    match p.peek() {
        None => Ok(f),
        Some(t) => Err(format!("unexpected {t:?} after the filter")),
    }
}

/// An attribute path as written (checked by [`attr_path`]), without its URN: names keep their
/// case, so that an attribute a PATCH adds is stored as the client spelt it.
fn written_path(word: &str) -> Result<(String, Option<String>), String> {
    attr_path(word)?;
    let plain =
        if word.to_ascii_lowercase().starts_with("urn:") { word.rsplit(':').next().unwrap_or(word) } else { word };
    let mut parts = plain.splitn(2, '.');
    let attr = parts.next().unwrap_or("").to_owned();
    Ok((attr, parts.next().map(str::to_owned)))
}

/// Parses a PATCH path.
pub fn parse_path(text: &str) -> Result<PatchPath, String> {
    let text = text.trim();
    let Some(open) = text.find('[') else {
        let (attr, sub) = written_path(text)?;
        return Ok(PatchPath { attr, filter: None, sub });
    };
    let close = text.rfind(']').ok_or("a bracket is not closed")?;
    let (attr, sub) = written_path(&text[..open])?;
    if sub.is_some() {
        return Err(format!("{text:?}: a value filter follows an attribute, not a sub-attribute"));
    }
    let filter = parse(&text[open + 1..close])?;
    let rest = &text[close + 1..];
    let sub = match rest.strip_prefix('.') {
        Some(s) => Some(written_path(s)?.0),
        None if rest.is_empty() => None,
        None => return Err(format!("{text:?}: unexpected {rest:?} after the bracket")),
    };
    Ok(PatchPath { attr, filter: Some(filter), sub })
}

/// The value of a top-level attribute, by its name compared case-insensitively.
pub fn get<'a>(resource: &'a Value, attr: &str) -> Option<&'a Value> {
    let obj = resource.as_object()?;
    obj.iter().find(|(k, _)| k.eq_ignore_ascii_case(attr)).map(|(_, v)| v).or_else(|| {
        // The enterprise extension's attributes live under its URN.
        obj.iter()
            .filter(|(k, _)| k.starts_with("urn:"))
            .find_map(|(_, ext)| ext.as_object()?.iter().find(|(k, _)| k.eq_ignore_ascii_case(attr)).map(|(_, v)| v))
    })
}

fn case_exact(attr: &str) -> bool {
    attr == "id" || attr == "externalid"
}

fn compare(found: &Value, op: Op, want: &Value, exact: bool) -> bool {
    let fold = |s: &str| if exact { s.to_owned() } else { s.to_lowercase() };
    match (found, want) {
        (Value::String(a), Value::String(b)) => {
            let (a, b) = (fold(a), fold(b));
            match op {
                Op::Eq => a == b,
                Op::Ne => a != b,
                Op::Co => a.contains(&b),
                Op::Sw => a.starts_with(&b),
                Op::Ew => a.ends_with(&b),
                Op::Gt => a > b,
                Op::Ge => a >= b,
                Op::Lt => a < b,
                Op::Le => a <= b,
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            match op {
                Op::Eq => a == b,
                Op::Ne => a != b,
                Op::Gt => a > b,
                Op::Ge => a >= b,
                Op::Lt => a < b,
                Op::Le => a <= b,
                _ => false,
            }
        }
        (Value::Bool(a), Value::Bool(b)) => match op {
            Op::Eq => a == b,
            Op::Ne => a != b,
            _ => false,
        },
        (a, Value::Null) => match op {
            Op::Eq => a.is_null(),
            Op::Ne => !a.is_null(),
            _ => false,
        },
        _ => op == Op::Ne,
    }
}

/// The values a path names in a resource: a multi-valued attribute gives each element's
/// sub-attribute (or its `value` without one).
fn values<'a>(resource: &'a Value, path: &AttrPath) -> Vec<&'a Value> {
    let Some(top) = get(resource, &path.attr) else { return vec![] };
    let pick = |v: &'a Value| -> Option<&'a Value> {
        match &path.sub {
            Some(sub) => get(v, sub),
            None if v.is_object() => get(v, "value"),
            None => Some(v),
        }
    };
    match top {
        Value::Array(items) => items.iter().filter_map(pick).collect(),
        other => pick(other).into_iter().collect(),
    }
}

fn present(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}

/// Whether `resource` matches `filter`.
pub fn matches(filter: &Filter, resource: &Value) -> bool {
    match filter {
        Filter::Present(path) => values(resource, path).into_iter().any(present),
        Filter::Compare(path, op, want) => {
            let found = values(resource, path);
            if found.is_empty() {
                return *op == Op::Ne && !want.is_null();
            }
            let exact = case_exact(&path.attr);
            match op {
                // `ne`: no value equals it.
                Op::Ne => found.iter().all(|v| compare(v, Op::Ne, want, exact)),
                _ => found.iter().any(|v| compare(v, *op, want, exact)),
            }
        }
        Filter::ValuePath(attr, inner) => match get(resource, attr) {
            Some(Value::Array(items)) => items.iter().any(|item| matches(inner, item)),
            Some(item) => matches(inner, item),
            None => false,
        },
        Filter::And(a, b) => matches(a, resource) && matches(b, resource),
        Filter::Or(a, b) => matches(a, resource) || matches(b, resource),
        Filter::Not(a) => !matches(a, resource),
    }
}

/// `attr eq "value"` on one attribute without a sub-attribute: what an index can answer
/// (provisioning clients look users up this way before each creation).
pub fn simple_eq(filter: &Filter) -> Option<(&str, &str)> {
    match filter {
        Filter::Compare(AttrPath { attr, sub: None }, Op::Eq, Value::String(v)) => Some((attr.as_str(), v.as_str())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user() -> Value {
        json!({
            "id": "U1", "userName": "Ada@Example.com", "externalId": "e-1", "active": true,
            "displayName": "Ada Lovelace", "name": {"givenName": "Ada", "familyName": "Lovelace"},
            "emails": [{"value": "ada@example.com", "type": "work", "primary": true}, {"value": "a@home.test", "type": "home"}],
            "meta": {"lastModified": "2026-11-28T10:00:00Z"},
            "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Maths"}
        })
    }

    fn m(f: &str) -> bool {
        matches(&parse(f).unwrap_or_else(|e| panic!("{f}: {e}")), &user())
    }

    #[test]
    fn operators_and_logic() {
        assert!(m(r#"userName eq "ada@example.com""#), "case-insensitive userName");
        assert!(!m(r#"externalId eq "E-1""#), "externalId is case-exact");
        assert!(m(r#"externalId eq "e-1""#));
        assert!(m(r#"name.familyName co "love""#));
        assert!(m(r#"userName sw "ada" and displayName ew "lace""#));
        assert!(m(r#"userName eq "x" or active eq true"#));
        assert!(m(r#"not (userName eq "x")"#));
        assert!(m(r#"emails[type eq "work" and value co "example"]"#));
        assert!(!m(r#"emails[type eq "other"]"#));
        assert!(m(r#"emails.value eq "a@home.test""#));
        assert!(m(r#"emails pr"#));
        assert!(!m(r#"title pr"#));
        assert!(m(r#"meta.lastModified gt "2026-01-01T00:00:00Z""#));
        assert!(m(r#"meta.lastModified lt "2027-01-01T00:00:00Z""#));
        assert!(m(r#"urn:ietf:params:scim:schemas:core:2.0:User:userName eq "ADA@example.com""#));
        assert!(m(r#"department eq "maths""#));
        assert!(m(r#"userName eq "x" or userName eq "y" or (active eq true and not (displayName eq "z"))"#));
        assert!(m(r#"title ne "boss""#));
    }

    #[test]
    fn bad_filters_are_refused() {
        for f in [
            "",
            "userName",
            "userName eq",
            "userName xx \"a\"",
            "(userName eq \"a\"",
            "userName eq \"a",
            "userName eq bare",
            "not userName eq \"a\"",
            "a.b.c eq 1",
            "userName eq \"a\" junk",
        ] {
            assert!(parse(f).is_err(), "{f:?}");
        }
    }

    #[test]
    fn patch_paths() {
        assert_eq!(parse_path("active").unwrap(), PatchPath { attr: "active".into(), filter: None, sub: None });
        assert_eq!(parse_path("name.givenName").unwrap().sub.as_deref(), Some("givenName"));
        let p = parse_path(r#"emails[type eq "work"].value"#).unwrap();
        assert_eq!((p.attr.as_str(), p.sub.as_deref()), ("emails", Some("value")));
        let p = parse_path(r#"members[value eq "2819c223-7f76-453a-919d-413861904646"]"#).unwrap();
        assert!(p.filter.is_some() && p.sub.is_none());
        let p = parse_path("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department").unwrap();
        assert_eq!(p.attr, "department");
        assert!(parse_path("emails[type eq \"work\"").is_err());
    }

    #[test]
    fn simple_lookups_are_recognised() {
        assert_eq!(simple_eq(&parse(r#"userName eq "a@b.c""#).unwrap()), Some(("username", "a@b.c")));
        assert_eq!(simple_eq(&parse(r#"userName co "a""#).unwrap()), None);
    }
}
