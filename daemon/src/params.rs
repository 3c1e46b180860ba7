//! Request parameters, from a query string or an `application/x-www-form-urlencoded` body, read
//! with one rule everywhere (RFC 6749 §3.1): a parameter sent twice is refused, and a parameter
//! sent without a value counts as absent.

use url::form_urlencoded;

#[derive(Debug, Clone, Default)]
pub struct Params(Vec<(String, String)>);

/// A parameter that appeared more than once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeated(pub String);

impl std::fmt::Display for Repeated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "parameter {} is repeated", self.0)
    }
}

impl Params {
    pub fn parse(encoded: &[u8]) -> Params {
        Params(form_urlencoded::parse(encoded).into_owned().collect())
    }

    /// The value of `name`: `None` when absent or empty, an error when repeated.
    pub fn get(&self, name: &str) -> Result<Option<&str>, Repeated> {
        let mut found = self.0.iter().filter(|(k, _)| k == name);
        let first = found.next().map(|(_, v)| v.as_str());
        if found.next().is_some() {
            return Err(Repeated(name.to_owned()));
        }
        Ok(first.filter(|v| !v.is_empty()))
    }

    /// Like [`Params::get`], as an owned string.
    pub fn owned(&self, name: &str) -> Result<Option<String>, Repeated> {
        Ok(self.get(name)?.map(str::to_owned))
    }

    /// Whether `name` was sent at all (even empty or repeated).
    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_repeats_and_empty_values() {
        let p = Params::parse(b"a=1&a=2&b=&c=3&d=x%20y");
        assert_eq!(p.get("a"), Err(Repeated("a".into())));
        assert_eq!(p.get("b"), Ok(None));
        assert!(p.has("b"));
        assert_eq!(p.get("c"), Ok(Some("3")));
        assert_eq!(p.get("d"), Ok(Some("x y")));
        assert_eq!(p.get("missing"), Ok(None));
        assert!(!p.has("missing"));
    }
}
