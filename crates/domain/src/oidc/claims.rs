//! The `claims` request parameter (OpenID Connect Core §5.5): individual claims asked for in the
//! ID token and at userinfo, beyond what the scopes give. Only the claims Latchkey can serve are
//! kept; others are ignored, as §5.5 allows. `essential` is accepted: every claim kept here is
//! always available, so an essential one is always returned.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The claims a request may ask for by name (`sub`, `iss`, `aud`, `auth_time` … are always in the
/// ID token; `acr` is not issued yet).
pub const SERVED: &[&str] = &["name", "picture", "email", "email_verified", "roles"];

/// Longest `claims` parameter read: it is kept with a pending request for ten minutes.
pub const MAX_LEN: usize = 4096;

/// What a request asked for, by where: sorted names, each once.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Requested {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub id_token: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub userinfo: Vec<String>,
}

impl Requested {
    /// The parameter's JSON: an object whose `id_token` and `userinfo` members (others are
    /// ignored) are objects mapping claim names to `null` or to an object of `essential` (a
    /// boolean), `value` or `values` (an array). `Ok(None)` when it asks for nothing served here.
    pub fn parse(text: &str) -> Result<Option<Requested>, String> {
        if text.len() > MAX_LEN {
            return Err(format!("claims is longer than {MAX_LEN} bytes"));
        }
        let doc: Value = serde_json::from_str(text).map_err(|e| format!("claims is not JSON: {e}"))?;
        let Value::Object(doc) = doc else { return Err("claims must be a JSON object".into()) };
        let mut out = Requested::default();
        for (member, into) in [("id_token", &mut out.id_token), ("userinfo", &mut out.userinfo)] {
            let Some(requests) = doc.get(member) else { continue };
            let Value::Object(requests) = requests else {
                return Err(format!("claims.{member} must be an object of claim names"));
            };
            for (name, request) in requests {
                check_request(member, name, request)?;
                if SERVED.contains(&name.as_str()) && !into.contains(name) {
                    into.push(name.clone());
                }
            }
            into.sort();
        }
        Ok((!out.is_empty()).then_some(out))
    }

    pub fn is_empty(&self) -> bool {
        self.id_token.is_empty() && self.userinfo.is_empty()
    }

    /// As stored with a code and its refresh tokens; `None` when nothing was asked for.
    pub fn to_column(&self) -> Option<String> {
        if self.is_empty() { None } else { serde_json::to_string(self).ok() }
    }

    /// A stored value back; a value this release cannot read asks for nothing.
    pub fn from_column(column: Option<&str>) -> Requested {
        column.and_then(|c| serde_json::from_str(c).ok()).unwrap_or_default()
    }
}

/// The `acr` values an essential `acr` claim request names (`value` or `values`, in the ID token
/// or at userinfo): what a step-up must satisfy. Empty for anything else, malformed JSON too
/// (which [`Requested::parse`] refuses).
pub fn essential_acr(text: &str) -> Vec<String> {
    let Ok(Value::Object(doc)) = serde_json::from_str::<Value>(text) else { return vec![] };
    let mut out = vec![];
    for member in ["id_token", "userinfo"] {
        let Some(Value::Object(acr)) = doc.get(member).and_then(|m| m.get("acr")) else { continue };
        if acr.get("essential") != Some(&Value::Bool(true)) {
            continue;
        }
        let values = acr.get("values").and_then(Value::as_array).cloned().unwrap_or_default();
        for v in acr.get("value").into_iter().chain(values.iter()) {
            if let Some(v) = v.as_str() {
                out.push(v.to_owned());
            }
        }
    }
    out
}

/// One claim's request: `null`, or an object whose known members have their types (§5.5.1).
fn check_request(member: &str, name: &str, request: &Value) -> Result<(), String> {
    let Value::Object(fields) = request else {
        return match request {
            Value::Null => Ok(()),
            _ => Err(format!("claims.{member}.{name} must be null or an object")),
        };
    };
    match (fields.get("essential"), fields.get("values")) {
        (Some(e), _) if !e.is_boolean() => Err(format!("claims.{member}.{name}.essential must be true or false")),
        (_, Some(v)) if !v.is_array() => Err(format!("claims.{member}.{name}.values must be an array")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_claims_are_kept_sorted_and_others_ignored() {
        let r = Requested::parse(
            r#"{"id_token":{"email":{"essential":true},"name":null,"email":null,"shoe_size":null},
                "userinfo":{"picture":{"values":["x"]}},"other":{"email":null}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.id_token, ["email", "name"]);
        assert_eq!(r.userinfo, ["picture"]);
        assert_eq!(Requested::from_column(r.to_column().as_deref()), r);
        assert_eq!(Requested::parse(r#"{"id_token":{"shoe_size":null}}"#).unwrap(), None, "nothing served");
        assert_eq!(Requested::from_column(Some("not json")), Requested::default());
    }

    #[test]
    fn an_essential_acr_names_what_a_step_up_must_satisfy() {
        assert_eq!(essential_acr(r#"{"id_token":{"acr":{"essential":true,"value":"phrh"}}}"#), ["phrh"]);
        assert_eq!(
            essential_acr(r#"{"id_token":{"acr":{"essential":true,"values":["phr","phrh"]}}}"#),
            ["phr", "phrh"]
        );
        assert!(essential_acr(r#"{"id_token":{"acr":{"values":["phrh"]}}}"#).is_empty(), "voluntary");
        assert!(essential_acr("{").is_empty());
    }

    #[test]
    fn malformed_requests_are_refused() {
        for bad in [
            "{",
            "[]",
            r#"{"id_token":["email"]}"#,
            r#"{"userinfo":{"email":true}}"#,
            r#"{"id_token":{"email":{"essential":"yes"}}}"#,
            r#"{"id_token":{"email":{"values":"a"}}}"#,
        ] {
            assert!(Requested::parse(bad).is_err(), "{bad}");
        }
        assert!(Requested::parse(&format!("{{\"x\":\"{}\"}}", "a".repeat(MAX_LEN))).is_err(), "too long");
    }
}
