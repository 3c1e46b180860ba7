//! SCIM PATCH (RFC 7644 §3.5.2) on a resource's JSON form: `add`, `replace` and `remove`, with
//! or without a path, including the shapes Microsoft Entra ID and Okta send (capitalised ops,
//! `"True"`/`"False"` strings, a value object of dotted or URN-named attributes, members removed
//! by value). The result is then read back like a PUT's body.

use serde_json::{Map, Value};

use super::filter::{self, Filter, PatchPath};

/// The enterprise extension's URN (its attributes live under this key).
pub const ENTERPRISE: &str = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/// Attributes of the enterprise extension (lower case).
const ENTERPRISE_ATTRS: &[&str] =
    &["employeenumber", "costcenter", "organization", "division", "department", "manager"];

/// Why an operation cannot be applied: its `scimType` and a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    pub scim_type: &'static str,
    pub detail: String,
}

fn err(scim_type: &'static str, detail: impl Into<String>) -> PatchError {
    PatchError { scim_type, detail: detail.into() }
}

/// The key under which `attr` (lower case) lives in `obj`, keeping the case the object has.
fn key_of(obj: &Map<String, Value>, attr: &str) -> Option<String> {
    obj.keys().find(|k| k.eq_ignore_ascii_case(attr)).cloned()
}

fn set(obj: &mut Map<String, Value>, attr: &str, value: Value) {
    let key = key_of(obj, attr).unwrap_or_else(|| attr.to_owned());
    obj.insert(key, value);
}

fn remove_key(obj: &mut Map<String, Value>, attr: &str) {
    if let Some(k) = key_of(obj, attr) {
        obj.remove(&k);
    }
}

/// `add` to a multi-valued attribute appends what is not there yet; to any other, sets.
fn add(obj: &mut Map<String, Value>, attr: &str, value: Value) {
    match (key_of(obj, attr).and_then(|k| obj.get_mut(&k)), value) {
        (Some(Value::Array(items)), Value::Array(new)) => {
            for v in new {
                if !items.contains(&v) {
                    items.push(v);
                }
            }
        }
        (Some(Value::Object(cur)), Value::Object(new)) => {
            for (k, v) in new {
                set(cur, &k, v);
            }
        }
        (_, value) => set(obj, attr, value),
    }
}

/// The filter's `attr eq "value"` pairs: what a new element must carry to match it.
fn eq_pairs(f: &Filter, out: &mut Vec<(String, Value)>) {
    match f {
        Filter::Compare(p, filter::Op::Eq, v) if p.sub.is_none() => out.push((p.attr.clone(), v.clone())),
        Filter::And(a, b) => {
            eq_pairs(a, out);
            eq_pairs(b, out);
        }
        _ => {}
    }
}

fn apply_path(
    resource: &mut Map<String, Value>,
    op: &str,
    path: &PatchPath,
    value: Option<Value>,
) -> Result<(), PatchError> {
    // An attribute of the enterprise extension lives in its object.
    if ENTERPRISE_ATTRS.contains(&path.attr.to_ascii_lowercase().as_str()) {
        let mut ext = match resource.remove(ENTERPRISE) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let done = apply_in(&mut ext, op, path, value);
        resource.insert(ENTERPRISE.to_owned(), Value::Object(ext));
        return done;
    }
    apply_in(resource, op, path, value)
}

fn apply_in(obj: &mut Map<String, Value>, op: &str, path: &PatchPath, value: Option<Value>) -> Result<(), PatchError> {
    match (&path.filter, &path.sub) {
        (None, None) => match op {
            "remove" => match value {
                // Okta and Entra remove members this way: the values to take out.
                Some(Value::Array(gone)) => {
                    if let Some(Value::Array(items)) = key_of(obj, &path.attr).and_then(|k| obj.get_mut(&k)) {
                        items.retain(|item| {
                            !gone.iter().any(|g| {
                                filter::get(g, "value").is_some()
                                    && filter::get(g, "value") == filter::get(item, "value")
                            })
                        });
                    }
                    Ok(())
                }
                _ => {
                    remove_key(obj, &path.attr);
                    Ok(())
                }
            },
            "add" => {
                add(obj, &path.attr, value.ok_or_else(|| err("invalidValue", "add needs a value"))?);
                Ok(())
            }
            _ => {
                set(obj, &path.attr, value.ok_or_else(|| err("invalidValue", "replace needs a value"))?);
                Ok(())
            }
        },
        (None, Some(sub)) => {
            let key = key_of(obj, &path.attr).unwrap_or_else(|| path.attr.clone());
            let target = obj.entry(key).or_insert_with(|| Value::Object(Map::new()));
            match target {
                Value::Object(inner) => {
                    if op == "remove" {
                        remove_key(inner, sub);
                    } else {
                        set(inner, sub, value.ok_or_else(|| err("invalidValue", "this operation needs a value"))?);
                    }
                    Ok(())
                }
                Value::Array(items) => {
                    // `emails.value`: every element's sub-attribute.
                    for item in items.iter_mut().filter_map(Value::as_object_mut) {
                        if op == "remove" {
                            remove_key(item, sub);
                        } else if let Some(v) = &value {
                            set(item, sub, v.clone());
                        }
                    }
                    Ok(())
                }
                _ => Err(err("invalidPath", format!("{} has no sub-attribute {sub}", path.attr))),
            }
        }
        (Some(f), sub) => {
            let key = key_of(obj, &path.attr).unwrap_or_else(|| path.attr.clone());
            if !matches!(obj.get(&key), Some(Value::Array(_))) {
                if op == "remove" {
                    return Err(err("noTarget", format!("no {} matches the filter", path.attr)));
                }
                obj.insert(key.clone(), Value::Array(vec![]));
            }
            let Some(Value::Array(items)) = obj.get_mut(&key) else {
                return Err(err("invalidPath", format!("{} is not a multi-valued attribute", path.attr)));
            };
            let hits: Vec<usize> = (0..items.len()).filter(|i| filter::matches(f, &items[*i])).collect();
            match (op, sub) {
                ("remove", None) => {
                    if hits.is_empty() {
                        return Err(err("noTarget", format!("no {} matches the filter", path.attr)));
                    }
                    let mut i = 0;
                    items.retain(|_| {
                        let keep = !hits.contains(&i);
                        i += 1;
                        keep
                    });
                }
                ("remove", Some(sub)) => {
                    for i in hits {
                        if let Some(item) = items[i].as_object_mut() {
                            remove_key(item, sub);
                        }
                    }
                }
                (_, None) => {
                    let v = value.ok_or_else(|| err("invalidValue", "this operation needs a value"))?;
                    for i in hits {
                        match (&mut items[i], &v) {
                            (Value::Object(item), Value::Object(new)) => {
                                for (k, x) in new {
                                    set(item, k, x.clone());
                                }
                            }
                            (slot, _) => *slot = v.clone(),
                        }
                    }
                }
                (_, Some(sub)) => {
                    let v = value.ok_or_else(|| err("invalidValue", "this operation needs a value"))?;
                    if hits.is_empty() {
                        // Entra adds `emails[type eq "work"].value` to a user without one: an
                        // element that matches the filter, with the value.
                        let mut item = Map::new();
                        let mut pairs = vec![];
                        eq_pairs(f, &mut pairs);
                        for (k, x) in pairs {
                            item.insert(k, x);
                        }
                        item.insert(sub.clone(), v);
                        items.push(Value::Object(item));
                    } else {
                        for i in hits {
                            if let Some(item) = items[i].as_object_mut() {
                                set(item, sub, v.clone());
                            }
                        }
                    }
                }
            }
            Ok(())
        }
    }
}

/// Applies one operation object (`{"op", "path"?, "value"?}`) to `resource`.
pub fn apply(resource: &mut Value, operation: &Value) -> Result<(), PatchError> {
    let Some(resource) = resource.as_object_mut() else { return Err(err("invalidSyntax", "not an object")) };
    let op = operation
        .get("op")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
        .ok_or_else(|| err("invalidSyntax", "an operation has no op"))?;
    if !["add", "replace", "remove"].contains(&op.as_str()) {
        return Err(err("invalidSyntax", format!("op {op:?} is not add, replace or remove")));
    }
    let value = operation.get("value").cloned();
    // The enterprise extension as a whole.
    if let Some(path) = operation.get("path").and_then(Value::as_str)
        && path.trim().eq_ignore_ascii_case(ENTERPRISE)
    {
        match (op.as_str(), value) {
            ("remove", _) => {
                resource.remove(ENTERPRISE);
            }
            (_, Some(Value::Object(new))) => {
                let mut ext = match resource.remove(ENTERPRISE) {
                    Some(Value::Object(m)) if op == "add" => m,
                    _ => Map::new(),
                };
                for (k, v) in new {
                    set(&mut ext, &k, v);
                }
                resource.insert(ENTERPRISE.to_owned(), Value::Object(ext));
            }
            _ => return Err(err("invalidValue", "the enterprise extension's value is an object")),
        }
        return Ok(());
    }
    match operation.get("path").and_then(Value::as_str).filter(|p| !p.trim().is_empty()) {
        Some(path) => {
            let path = filter::parse_path(path).map_err(|e| err("invalidPath", e))?;
            apply_path(resource, &op, &path, value)
        }
        None if op == "remove" => Err(err("noTarget", "remove needs a path")),
        None => {
            let Some(Value::Object(attrs)) = value else {
                return Err(err("invalidValue", "without a path, the value must be an object of attributes"));
            };
            for (name, v) in attrs {
                // `name.givenName`, or an extension's URN with its attributes as an object.
                if name.to_ascii_lowercase().starts_with("urn:") && v.is_object() && !name.contains(":User:") {
                    let Value::Object(ext) = v else { continue };
                    for (k, x) in ext {
                        let path = filter::parse_path(&k).map_err(|e| err("invalidPath", e))?;
                        apply_path(resource, &op, &path, Some(x))?;
                    }
                    continue;
                }
                let path = filter::parse_path(&name).map_err(|e| err("invalidPath", e))?;
                apply_path(resource, &op, &path, Some(v))?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patched(mut r: Value, ops: Value) -> Value {
        for op in ops.as_array().unwrap() {
            apply(&mut r, op).unwrap_or_else(|e| panic!("{op}: {e:?}"));
        }
        r
    }

    #[test]
    fn entra_shapes() {
        let r = json!({"userName": "ada@x.test", "active": true, "emails": [{"type": "work", "value": "ada@x.test", "primary": true}]});
        let r = patched(
            r,
            json!([
                {"op": "Replace", "path": "active", "value": "False"},
                {"op": "Add", "path": "displayName", "value": "Ada L"},
                {"op": "Replace", "path": "emails[type eq \"work\"].value", "value": "ada@y.test"},
                {"op": "Add", "path": "name.givenName", "value": "Ada"},
                {"op": "Add", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Maths"},
                {"op": "Add", "path": "phoneNumbers[type eq \"mobile\"].value", "value": "+1 555"}
            ]),
        );
        assert_eq!(r["active"], "False");
        assert_eq!(r["displayName"], "Ada L");
        assert_eq!(r["emails"][0]["value"], "ada@y.test");
        assert_eq!(r["name"]["givenName"], "Ada");
        assert_eq!(r[ENTERPRISE]["department"], "Maths");
        assert_eq!(r["phoneNumbers"], json!([{"type": "mobile", "value": "+1 555"}]));
    }

    #[test]
    fn okta_shapes() {
        let r = json!({"userName": "ada@x.test", "active": true, "name": {"givenName": "Ada", "familyName": "L"}});
        let r = patched(r, json!([{"op": "replace", "value": {"active": false, "name.familyName": "Lovelace"}}]));
        assert_eq!((r["active"].clone(), r["name"]["familyName"].clone()), (json!(false), json!("Lovelace")));
        assert_eq!(r["name"]["givenName"], "Ada");
    }

    #[test]
    fn group_members() {
        let g = json!({"displayName": "Staff", "members": [{"value": "a"}, {"value": "b"}]});
        let g = patched(
            g,
            json!([
                {"op": "add", "path": "members", "value": [{"value": "c"}, {"value": "a"}]},
                {"op": "remove", "path": "members[value eq \"b\"]"},
                {"op": "Remove", "path": "members", "value": [{"value": "c"}]}
            ]),
        );
        assert_eq!(g["members"], json!([{"value": "a"}]));
        let g = patched(g, json!([{"op": "replace", "path": "members", "value": []}]));
        assert_eq!(g["members"], json!([]));
    }

    #[test]
    fn bad_operations() {
        let mut r = json!({"userName": "a"});
        for (op, t) in [
            (json!({"op": "move", "path": "a"}), "invalidSyntax"),
            (json!({"path": "a"}), "invalidSyntax"),
            (json!({"op": "remove"}), "noTarget"),
            (json!({"op": "replace", "value": 3}), "invalidValue"),
            (json!({"op": "replace", "path": "emails[type eq", "value": 3}), "invalidPath"),
            (json!({"op": "remove", "path": "members[value eq \"zz\"]"}), "noTarget"),
        ] {
            assert_eq!(apply(&mut r, &op).map_err(|e| e.scim_type), Err(t), "{op}");
        }
    }
}
