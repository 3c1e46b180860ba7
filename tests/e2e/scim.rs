//! SCIM 2.0 provisioning (`latchkey scim enable`, `{base_url}/scim/v2`): the request shapes
//! Microsoft Entra ID and Okta send, filters, PATCH, ETags, groups as roles, and refusals in
//! SCIM's error shape that store nothing.

use serde_json::{Value, json};

use crate::support::*;

const SCIM: &str = "application/scim+json";
const PATCH_OP: &str = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

struct Client<'a> {
    site: &'a Site<'a>,
    token: String,
}

impl Client<'_> {
    fn url(&self, path: &str) -> String {
        format!("{}/scim/v2{path}", self.site.base)
    }
    fn call(&self, method: &str, path: &str, body: Option<&Value>, extra: &[(&str, &str)]) -> Http {
        let auth = format!("Bearer {}", self.token);
        let mut headers = vec![("Authorization", auth.as_str())];
        headers.extend_from_slice(extra);
        let bytes = body.map(|b| serde_json::to_vec(b).unwrap()).unwrap_or_default();
        send_raw(method, &self.url(path), body.map(|_| SCIM), bytes, &headers)
    }
    fn get(&self, path: &str) -> Http {
        self.call("GET", path, None, &[])
    }
    fn send(&self, method: &str, path: &str, body: &Value) -> Http {
        self.call(method, path, Some(body), &[])
    }
    fn patch(&self, path: &str, ops: Value) -> Http {
        self.send("PATCH", path, &json!({"schemas": [PATCH_OP], "Operations": ops}))
    }
}

/// Expects a SCIM error with this status and scimType, and no change to the database.
#[track_caller]
fn refused(d: &TestDaemon, r: Http, status: u16, scim_type: Option<&str>) {
    assert_eq!(r.status, status, "{}", r.body);
    assert_eq!(r.header("content-type"), Some(SCIM), "{:?}", r.headers);
    let e = r.json();
    assert_eq!(e["schemas"], json!(["urn:ietf:params:scim:api:messages:2.0:Error"]));
    assert_eq!(e["status"], status.to_string());
    assert_eq!(e["scimType"].as_str(), scim_type, "{e}");
    assert!(e["detail"].as_str().is_some_and(|m| !m.is_empty()));
    let _ = d;
}

fn entra_user(user_name: &str, external: &str) -> Value {
    json!({
        "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
        "externalId": external,
        "userName": user_name,
        "active": true,
        "displayName": "Ada Lovelace",
        "emails": [{"primary": true, "type": "work", "value": user_name}],
        "meta": {"resourceType": "User"},
        "name": {"formatted": "Ada Lovelace", "familyName": "Lovelace", "givenName": "Ada"},
        "title": "Countess",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Analytical Engines"}
    })
}

#[test]
fn a_directory_provisions_users_and_groups() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);

    // Off until enabled: the endpoint says so, and the status too.
    assert_eq!(d.cli(&["scim", "status", "--tenant", "acme", "-o", "json"]).ok().json()["enabled"], false);
    let off = Client { site: &site, token: "nothing".into() };
    refused(&d, off.get("/Users"), 404, None);

    let on = d.cli(&["scim", "enable", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(on["base_url"], format!("{}/scim/v2", site.base));
    let token = on["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("lks_"));
    assert_eq!(d.sql().i64("SELECT count(*) FROM tenants WHERE slug = 'acme' AND scim_token_hash IS NOT NULL"), 1);
    let again = d.cli(&["scim", "enable", "--tenant", "acme"]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("rotate-token"), "{}", again.stderr);
    let quiet = d.cli(&["scim", "status", "--tenant", "acme"]).ok().stdout;
    assert!(!quiet.contains(&token), "the token is shown once");

    // Who may call: the bearer token, nothing else.
    let wrong = Client { site: &site, token: "lks_wrong".into() };
    let r = wrong.get("/Users");
    assert!(r.header("www-authenticate").is_some_and(|h| h.starts_with("Bearer")));
    refused(&d, r, 401, None);
    let scim = Client { site: &site, token: token.clone() };

    // Discovery.
    let spc = scim.get("/ServiceProviderConfig").json();
    assert_eq!((spc["patch"]["supported"].as_bool(), spc["etag"]["supported"].as_bool()), (Some(true), Some(true)));
    assert_eq!(scim.get("/ResourceTypes").json()["totalResults"], 2);
    let schemas = scim.get("/Schemas").json();
    assert_eq!(schemas["totalResults"], 3);
    assert_eq!(scim.get("/Schemas/urn:ietf:params:scim:schemas:core:2.0:User").json()["name"], "User");

    // Entra creates a user: invited, with everything it sent kept.
    let created = scim.send("POST", "/Users", &entra_user("ada@acme.test", "ada-ext"));
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.header("etag"), Some("W/\"1\""));
    let ada = created.json();
    let ada_id = ada["id"].as_str().unwrap().to_owned();
    assert_eq!(created.header("location").map(str::to_owned), Some(format!("{}/scim/v2/Users/{ada_id}", site.base)));
    assert_eq!(ada["title"], "Countess");
    assert_eq!(ada["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]["department"], "Analytical Engines");
    assert_eq!(ada["active"], true);
    let shown = d.cli(&["user", "show", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json();
    assert_eq!((shown["status"].as_str(), shown["name"].as_str()), (Some("invited"), Some("Ada Lovelace")));
    assert_eq!(d.sql().i64("SELECT count(*) FROM invites"), 1, "an invitation to register a passkey");

    // Okta's shape: userName is not an address; the primary e-mail is.
    let okta = json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": "bea.smith",
        "name": {"givenName": "Bea", "familyName": "Smith"},
        "emails": [{"primary": true, "value": "bea@acme.test", "type": "work"}], "active": true});
    let bea = scim.send("POST", "/Users", &okta);
    assert_eq!(bea.status, 201, "{}", bea.body);
    let bea_id = bea.json()["id"].as_str().unwrap().to_owned();
    let shown = d.cli(&["user", "show", "--tenant", "acme", "bea@acme.test", "-o", "json"]).ok().json();
    assert_eq!(shown["name"], "Bea Smith", "the name, from name.givenName and familyName");

    // Refusals, each storing nothing.
    let before = d.snapshot();
    refused(&d, scim.send("POST", "/Users", &entra_user("ada@acme.test", "other")), 409, Some("uniqueness"));
    refused(
        &d,
        scim.send("POST", "/Users", &json!({"userName": "BEA.SMITH", "emails": [{"value": "x@acme.test"}]})),
        409,
        Some("uniqueness"),
    );
    refused(
        &d,
        scim.send("POST", "/Users", &json!({"userName": "zed@acme.test", "shoeSize": 44})),
        400,
        Some("invalidSyntax"),
    );
    refused(&d, scim.send("POST", "/Users", &json!({"userName": "zed"})), 400, Some("invalidValue"));
    let junk = send_raw(
        "POST",
        &scim.url("/Users"),
        Some(SCIM),
        b"{not json".to_vec(),
        &[("Authorization", &format!("Bearer {token}"))],
    );
    refused(&d, junk, 400, Some("invalidSyntax"));
    refused(&d, scim.get("/Users?filter=userName%20eq"), 400, Some("invalidFilter"));
    refused(&d, scim.get("/Users?filter=userName%20zz%20%22a%22"), 400, Some("invalidFilter"));
    refused(
        &d,
        scim.patch(&format!("/Users/{ada_id}"), json!([{"op": "explode", "path": "active"}])),
        400,
        Some("invalidSyntax"),
    );
    refused(
        &d,
        scim.patch(&format!("/Users/{ada_id}"), json!([{"op": "remove", "path": "emails[type eq \"home\"]"}])),
        400,
        Some("noTarget"),
    );
    refused(&d, scim.get("/Users/nobody"), 404, None);
    let r = scim.call(
        "PATCH",
        &format!("/Users/{ada_id}"),
        Some(&json!({"schemas": [PATCH_OP], "Operations": [{"op": "replace", "path": "title", "value": "x"}]})),
        &[("If-Match", "W/\"7\"")],
    );
    refused(&d, r, 412, None);
    assert_eq!(d.snapshot(), before, "refused SCIM calls store nothing");

    // Filters (what Entra and Okta send before creating), and pages.
    let one = |f: &str| {
        scim.get(&format!("/Users?filter={}", url::form_urlencoded::byte_serialize(f.as_bytes()).collect::<String>()))
            .json()
    };
    assert_eq!(one(r#"userName eq "ADA@acme.test""#)["totalResults"], 1);
    assert_eq!(one(r#"externalId eq "ada-ext""#)["Resources"][0]["id"], ada_id.as_str());
    assert_eq!(one(r#"userName eq "nobody@acme.test""#)["totalResults"], 0);
    assert_eq!(one(r#"emails[type eq "work" and value co "bea"]"#)["Resources"][0]["id"], bea_id.as_str());
    assert_eq!(one(r#"name.familyName sw "Love" or userName eq "bea.smith""#)["totalResults"], 2);
    assert_eq!(one(r#"not (active eq false) and meta.lastModified gt "2000-01-01T00:00:00Z""#)["totalResults"], 2);
    let page = scim.get("/Users?startIndex=2&count=1").json();
    assert_eq!(
        (page["totalResults"].as_u64(), page["itemsPerPage"].as_u64(), page["startIndex"].as_u64()),
        (Some(2), Some(1), Some(2))
    );

    // A user who has signed in is deactivated by Entra: signed out, disabled; then back.
    let (_, cookie) = site.user_with_passkey("cy@acme.test");
    let cy = one(r#"userName eq "cy@acme.test""#)["Resources"][0].clone();
    let cy_id = cy["id"].as_str().unwrap().to_owned();
    assert_eq!(cy["meta"]["version"], "W/\"0\"", "a user the CLI invited, not yet changed over SCIM");
    let off = scim.patch(&format!("/Users/{cy_id}"), json!([{"op": "Replace", "path": "active", "value": "False"}]));
    assert_eq!((off.status, off.json()["active"].as_bool()), (200, Some(false)), "{}", off.body);
    assert_eq!(off.header("etag"), Some("W/\"1\""));
    let r = site.api("GET", "/api/credentials", None, &cookie, None);
    assert_eq!(r.status, 401, "the session ended");
    assert_eq!(
        d.cli(&["user", "show", "--tenant", "acme", "cy@acme.test", "-o", "json"]).ok().json()["status"],
        "disabled"
    );
    let back = scim.call(
        "PATCH",
        &format!("/Users/{cy_id}"),
        Some(&json!({"schemas": [PATCH_OP], "Operations": [{"op": "replace", "value": {"active": true, "name.givenName": "Cy"}}]})),
        &[("If-Match", "W/\"1\"")],
    );
    assert_eq!(back.status, 200, "{}", back.body);
    assert_eq!(back.json()["name"]["givenName"], "Cy");
    assert_eq!(
        d.cli(&["user", "show", "--tenant", "acme", "cy@acme.test", "-o", "json"]).ok().json()["status"],
        "active"
    );

    // Entra's attribute updates, and a PUT.
    let r = scim.patch(
        &format!("/Users/{ada_id}"),
        json!([
            {"op": "Replace", "path": "displayName", "value": "Ada King"},
            {"op": "Add", "path": "phoneNumbers[type eq \"mobile\"].value", "value": "+44 20 7946 0000"},
            {"op": "Replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Mathematics"}
        ]),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let ada = scim.get(&format!("/Users/{ada_id}")).json();
    assert_eq!(ada["phoneNumbers"], json!([{"type": "mobile", "value": "+44 20 7946 0000"}]));
    assert_eq!(ada["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"]["department"], "Mathematics");
    assert_eq!(
        d.cli(&["user", "show", "--tenant", "acme", "ada@acme.test", "-o", "json"]).ok().json()["name"],
        "Ada King"
    );
    let mut put = entra_user("ada@acme.test", "ada-ext");
    put["displayName"] = json!("Augusta Ada King");
    put["emails"] = json!([{"primary": true, "type": "work", "value": "augusta@acme.test"}]);
    let r = scim.send("PUT", &format!("/Users/{ada_id}"), &put);
    assert_eq!(r.status, 200, "{}", r.body);
    let shown = d.cli(&["user", "show", "--tenant", "acme", "augusta@acme.test", "-o", "json"]).ok().json();
    assert_eq!(shown["name"], "Augusta Ada King");

    // Groups are roles.
    let g = scim.send(
        "POST",
        "/Groups",
        &json!({"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group"], "displayName": "Sales Team", "externalId": "g1",
                "members": [{"value": ada_id}]}),
    );
    assert_eq!(g.status, 201, "{}", g.body);
    let gid = g.json()["id"].as_str().unwrap().to_owned();
    let roles = d.cli(&["role", "list", "--tenant", "acme", "-o", "json"]).ok().json();
    assert_eq!(roles[0]["name"], "sales-team", "{roles}");
    let f = url::form_urlencoded::byte_serialize(br#"displayName eq "sales team""#).collect::<String>();
    let found = scim.get(&format!("/Groups?filter={f}&excludedAttributes=members")).json();
    assert_eq!(found["Resources"][0]["id"], gid.as_str());
    assert!(found["Resources"][0].get("members").is_none());
    // Okta adds and removes members.
    let r = scim.patch(
        &format!("/Groups/{gid}"),
        json!([
            {"op": "add", "path": "members", "value": [{"value": bea_id, "display": "bea.smith"}]},
            {"op": "remove", "path": format!("members[value eq \"{ada_id}\"]")}
        ]),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["members"].as_array().map(Vec::len), Some(1));
    let bea_roles = d.cli(&["user", "show", "--tenant", "acme", "bea@acme.test", "-o", "json"]).ok().json();
    assert_eq!(bea_roles["roles"], json!(["sales-team"]));
    assert_eq!(scim.get(&format!("/Users/{bea_id}")).json()["groups"][0]["display"], "Sales Team");
    // Entra removes a member by value; an unknown member is refused.
    let r = scim
        .patch(&format!("/Groups/{gid}"), json!([{"op": "Remove", "path": "members", "value": [{"value": bea_id}]}]));
    assert_eq!(r.json()["members"], json!([]));
    let before = d.snapshot();
    refused(
        &d,
        scim.patch(
            &format!("/Groups/{gid}"),
            json!([{"op": "add", "path": "members", "value": [{"value": "nobody"}]}]),
        ),
        400,
        Some("invalidValue"),
    );
    refused(&d, scim.send("POST", "/Groups", &json!({"displayName": "sales TEAM"})), 409, Some("uniqueness"));
    assert_eq!(d.snapshot(), before);
    assert_eq!(scim.call("DELETE", &format!("/Groups/{gid}"), None, &[]).status, 204);
    assert_eq!(d.cli(&["role", "list", "--tenant", "acme", "-o", "json"]).ok().json(), json!([]));

    // Delete, audited with the SCIM client as the actor.
    assert_eq!(scim.call("DELETE", &format!("/Users/{bea_id}"), None, &[]).status, 204);
    assert_eq!(d.cli(&["user", "show", "--tenant", "acme", "bea@acme.test"]).code, 1);
    let audit = d.cli(&["audit", "--tenant", "acme", "-o", "json"]).ok().json();
    let by_scim: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["actor"] == "scim")
        .filter_map(|e| e["action"].as_str())
        .collect();
    for action in [
        "user.invite",
        "user.disable",
        "user.enable",
        "user.update",
        "role.create",
        "role.update",
        "role.delete",
        "user.delete",
    ] {
        assert!(by_scim.contains(&action), "{action} in {by_scim:?}");
    }

    // An m2m app's access token with the scim scope works too; one without it is refused.
    let with_scope = crate::oidc_support::app(&site, "m2m", &["--scope", "scim"]);
    let without = crate::oidc_support::app(&site, "m2m", &[]);
    let cc = |a: &crate::oidc_support::App| {
        let r = crate::oidc_support::token(&site, a, &[("grant_type", "client_credentials")]);
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()["access_token"].as_str().unwrap().to_owned()
    };
    let m2m = Client { site: &site, token: cc(&with_scope) };
    assert_eq!(m2m.get("/Users").status, 200);
    // A DPoP-bound token of that app is its key holder's alone: not accepted as a Bearer token.
    crate::oidc_support::past_start(&d);
    let key = crate::oidc_support::holder(latchkey::admin::SigningAlg::ES256);
    let proof = key.proof(&d, "POST", &format!("{}/token", site.base), serde_json::json!({}));
    let bound = send_raw(
        "POST",
        &format!("{}/token", site.base),
        Some("application/x-www-form-urlencoded"),
        b"grant_type=client_credentials".to_vec(),
        &[
            (
                "Authorization",
                &crate::oidc_support::basic_auth(&with_scope.client_id, with_scope.secret.as_deref().unwrap()),
            ),
            ("DPoP", &proof),
        ],
    );
    assert_eq!(bound.json()["token_type"], "DPoP", "{}", bound.body);
    let stolen = Client { site: &site, token: bound.json()["access_token"].as_str().unwrap().to_owned() };
    refused(&d, stolen.get("/Users"), 401, None);
    let plain = Client { site: &site, token: cc(&without) };
    refused(&d, plain.get("/Users"), 403, None);
    // A user's access token cannot carry the scope, even from an app that has it.
    let web = crate::oidc_support::app(&site, "web", &["--scope", "scim"]);
    let p = crate::oidc_support::pkce();
    let url = crate::oidc_support::authorize_url(&site, &web, &p, &[("scope", "openid scim")]);
    let r = crate::oidc_support::get(&url, None);
    assert_eq!(r.status, 302, "{}", r.body);
    let params = crate::oidc_support::location_params(&r);
    assert_eq!(crate::oidc_support::param(&params, "error"), Some("invalid_scope"), "{params:?}");

    // A rotated token replaces the old one; disabled, the endpoint is gone.
    let rotated = d.cli(&["scim", "rotate-token", "--tenant", "acme", "-q"]).ok().stdout.trim().to_owned();
    assert!(rotated.starts_with("lks_") && rotated != token);
    refused(&d, scim.get("/Users"), 401, None);
    let fresh = Client { site: &site, token: rotated };
    assert_eq!(fresh.get("/Users").status, 200);
    d.cli(&["scim", "disable", "--tenant", "acme"]).ok();
    refused(&d, fresh.get("/Users"), 404, None);
    refused(&d, m2m.get("/Users"), 404, None);
}

/// scim2-tester (PyPI, installed by scripts/test.sh) creates, reads, searches, patches, replaces
/// and deletes users and groups from what the discovery endpoints publish, and finds nothing
/// wrong.
#[test]
fn scim2_tester_finds_no_failure() {
    let python = repo_root().join("tests/py/.venv/bin/python");
    assert!(
        python.exists(),
        "scim2-tester is not installed: run `bash scripts/test.sh`, which installs it in tests/py/.venv"
    );
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = d.cli(&["scim", "enable", "--tenant", "acme", "-q"]).ok().stdout.trim().to_owned();
    let out: Run = std::process::Command::new(python)
        .arg(repo_root().join("tests/py/scim_check.py"))
        .arg(format!("{}/scim/v2", site.base))
        .arg(&token)
        .output()
        .expect("run scim2-tester")
        .into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    eprintln!("scim2-tester: {}", report["by_status"]);
    assert_eq!(report["problems"], json!([]), "{report:#}");
    assert!(report["total"].as_u64().unwrap_or(0) >= 100, "{report}");
    assert_eq!(report["by_status"]["SUCCESS"], report["total"]);
}

/// Replaces `{{name}}` placeholders with what earlier steps saved.
fn filled(text: &str, saved: &std::collections::HashMap<String, String>) -> String {
    saved.iter().fold(text.to_owned(), |t, (k, v)| t.replace(&format!("{{{{{k}}}}}"), v))
}

/// Replays a recorded sequence of a directory's requests (tests/e2e/fixtures): each step's
/// status, and the values its `expect` names by JSON pointer (`null`: absent).
fn replay(site: &Site, token: &str, file: &str) -> usize {
    let text = std::fs::read_to_string(repo_root().join("tests/e2e/fixtures").join(file)).unwrap();
    let recorded: Value = serde_json::from_str(&text).unwrap();
    let scim = Client { site, token: token.to_owned() };
    let mut saved = std::collections::HashMap::new();
    let steps = recorded["steps"].as_array().unwrap();
    for (i, step) in steps.iter().enumerate() {
        let method = step["method"].as_str().unwrap();
        let path = filled(step["path"].as_str().unwrap(), &saved);
        let body = step.get("body").map(|b| serde_json::from_str::<Value>(&filled(&b.to_string(), &saved)).unwrap());
        let r = scim.call(method, &path, body.as_ref(), &[]);
        let want = step["status"].as_u64().unwrap() as u16;
        assert_eq!(r.status, want, "{file} step {i}: {method} {path}: {}", r.body);
        let answer: Value = if r.body.is_empty() { Value::Null } else { r.json() };
        if let Some(save) = step.get("save").and_then(Value::as_object) {
            for (name, pointer) in save {
                let v = answer.pointer(pointer.as_str().unwrap()).and_then(Value::as_str).unwrap();
                saved.insert(name.clone(), v.to_owned());
            }
        }
        if let Some(expect) = step.get("expect").and_then(Value::as_object) {
            for (pointer, value) in expect {
                let value: Value = serde_json::from_str(&filled(&value.to_string(), &saved)).unwrap();
                let got = answer.pointer(pointer).cloned().unwrap_or(Value::Null);
                assert_eq!(got, value, "{file} step {i}: {method} {path}: {pointer} in {answer}");
            }
        }
    }
    steps.len()
}

#[test]
fn recorded_entra_and_okta_sequences_replay() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let token = d.cli(&["scim", "enable", "--tenant", "acme", "-q"]).ok().stdout.trim().to_owned();
    let entra = replay(&site, &token, "scim-entra.json");
    let okta = replay(&site, &token, "scim-okta.json");
    eprintln!("replayed: Entra {entra} requests, Okta {okta} requests");
    // What stays: Okta's user, re-activated, with no password anywhere.
    assert_eq!(d.sql().i64("SELECT count(*) FROM users"), 1);
    let shown = d.cli(&["user", "show", "--tenant", "acme", "test.user@okta.local", "-o", "json"]).ok().json();
    assert_eq!((shown["name"].as_str(), shown["status"].as_str()), (Some("Another User"), Some("invited")));
    assert_eq!(d.sql().i64("SELECT count(*) FROM scim_users WHERE attributes LIKE '%1mz050nq%'"), 0);
}
