//! Request parameters, from a query string or an `application/x-www-form-urlencoded` body, read
//! with one rule everywhere (RFC 6749 §3.1): a parameter sent twice is refused, and a parameter
//! sent without a value counts as absent. A value with a control character is refused too: no
//! OAuth or OpenID parameter may hold one (RFC 6749 Appendix A: their characters are printable),
//! and PostgreSQL cannot store a NUL byte, so it is turned away here, before any query.

use url::form_urlencoded;

#[derive(Debug, Clone, Default)]
pub struct Params(Vec<(String, String)>);

/// A parameter that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamError {
    /// It appeared more than once.
    Repeated(String),
    /// Its value holds a control character (a NUL byte, a newline, an escape…).
    Control(String),
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamError::Repeated(name) => write!(f, "parameter {name} is repeated"),
            ParamError::Control(name) => write!(f, "parameter {name} contains a control character"),
        }
    }
}

impl Params {
    pub fn parse(encoded: &[u8]) -> Params {
        Params(form_urlencoded::parse(encoded).into_owned().collect())
    }

    /// The value of `name`: `None` when absent or empty, an error when repeated or when it holds
    /// a control character.
    pub fn get(&self, name: &str) -> Result<Option<&str>, ParamError> {
        let mut found = self.0.iter().filter(|(k, _)| k == name);
        let first = found.next().map(|(_, v)| v.as_str());
        if found.next().is_some() {
            return Err(ParamError::Repeated(name.to_owned()));
        }
        if first.is_some_and(has_control) {
            return Err(ParamError::Control(name.to_owned()));
        }
        Ok(first.filter(|v| !v.is_empty()))
    }

    /// Like [`Params::get`], as an owned string.
    pub fn owned(&self, name: &str) -> Result<Option<String>, ParamError> {
        Ok(self.get(name)?.map(str::to_owned))
    }

    /// Every parameter as sent, in order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    /// Parameters from pairs (a pushed request's, as stored).
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Params {
        Params(pairs)
    }

    /// Whether `name` was sent at all (even empty or repeated).
    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(k, _)| k == name)
    }
}

/// Whether `text` holds a control character (C0, DEL or C1).
pub fn has_control(text: &str) -> bool {
    text.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_repeats_and_empty_values() {
        let p = Params::parse(b"a=1&a=2&b=&c=3&d=x%20y");
        assert_eq!(p.get("a"), Err(ParamError::Repeated("a".into())));
        assert_eq!(p.get("b"), Ok(None));
        assert!(p.has("b"));
        assert_eq!(p.get("c"), Ok(Some("3")));
        assert_eq!(p.get("d"), Ok(Some("x y")));
        assert_eq!(p.get("missing"), Ok(None));
        assert!(!p.has("missing"));
    }

    #[test]
    fn control_characters_are_refused() {
        let p = Params::parse(b"nul=a%00b&lf=a%0Ab&esc=%1B[31m&del=%7F&c1=%C2%85&tab=%09&ok=caf%C3%A9");
        for name in ["nul", "lf", "esc", "del", "c1", "tab"] {
            assert_eq!(p.get(name), Err(ParamError::Control(name.into())), "{name}");
        }
        assert_eq!(p.get("ok"), Ok(Some("café")));
    }
}
