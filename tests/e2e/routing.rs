//! The public listener: tenant routing by base URL, health, metrics, discovery, errors.

use crate::support::*;

#[test]
fn discovery_is_built_from_the_base_url() {
    let d = TestDaemon::start();
    d.tenant("acme");
    let r = d.get("/acme/.well-known/openid-configuration");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    let doc = r.json();
    let issuer = format!("{}/acme", d.base);
    assert_eq!(doc["issuer"], issuer.as_str());
    for (field, path) in [
        ("authorization_endpoint", "/authorize"),
        ("token_endpoint", "/token"),
        ("userinfo_endpoint", "/userinfo"),
        ("jwks_uri", "/.well-known/jwks.json"),
        ("end_session_endpoint", "/logout"),
        ("revocation_endpoint", "/revoke"),
        ("introspection_endpoint", "/introspect"),
    ] {
        assert_eq!(doc[field], format!("{issuer}{path}"), "{field}");
    }
    assert_eq!(doc["response_types_supported"], serde_json::json!(["code"]));
    assert_eq!(doc["code_challenge_methods_supported"], serde_json::json!(["S256"]));
    assert_eq!(doc["id_token_signing_alg_values_supported"], serde_json::json!(["RS256", "ES256", "EdDSA"]));
    let grants = doc["grant_types_supported"].as_array().unwrap();
    assert!(!grants.iter().any(|g| g == "password" || g == "implicit"));
    for scope in ["openid", "profile", "email"] {
        assert!(doc["scopes_supported"].as_array().unwrap().iter().any(|s| s == scope));
    }

    // A forged Host header routes (path-based) but never changes the issuer.
    let forged = http_get(&format!("{}/acme/.well-known/openid-configuration", d.base), Some("evil.example.com"));
    assert_eq!(forged.status, 200);
    assert_eq!(forged.json()["issuer"], issuer.as_str());
    let preflight = http_request("OPTIONS", &format!("{}/acme/.well-known/openid-configuration", d.base));
    assert_eq!(preflight.status, 204);
    assert_eq!(preflight.header("access-control-allow-origin"), Some("*"));
}

#[test]
fn custom_domain_tenant_is_routed_by_host() {
    let d = TestDaemon::start();
    d.cli(&["tenant", "create", "corp", "--base-url", "https://login.corp.test", "--rp-id", "corp.test"]).ok();
    let port = d.base.rsplit(':').next().unwrap();
    let url = format!("http://127.0.0.1:{port}/.well-known/openid-configuration");
    let r = http_get(&url, Some("login.corp.test"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["issuer"], "https://login.corp.test");
    assert_eq!(r.json()["token_endpoint"], "https://login.corp.test/token");
    // Without its host, a custom-domain tenant is not reachable.
    assert_eq!(http_get(&url, None).status, 404);
    // Its host does not serve the tenants under the public URL; health checks answer everywhere.
    d.tenant("acme");
    let base = format!("http://127.0.0.1:{port}");
    let acme = http_get(&format!("{base}/acme/.well-known/openid-configuration"), Some("login.corp.test"));
    assert_eq!(acme.status, 404, "{}", acme.body);
    assert_eq!(http_get(&format!("{base}/healthz"), Some("login.corp.test")).status, 200);
    assert_eq!(http_get(&format!("{base}/acme/.well-known/openid-configuration"), Some("other.internal")).status, 200);
}

#[test]
fn health_metrics_and_errors() {
    let d = TestDaemon::start();
    d.tenant("acme");
    assert_eq!(d.get("/healthz").status, 200);
    let ready = d.get("/readyz");
    assert_eq!(ready.status, 200);
    let backend = match backend() {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    assert!(ready.body.starts_with(&format!("ready ({backend}, ")), "names the backend: {}", ready.body);

    let unknown = d.get("/nobody/.well-known/openid-configuration");
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"], "tenant_not_found");
    assert!(unknown.json()["error_description"].as_str().unwrap().len() > 10);

    let missing = d.get("/acme/no-such-endpoint");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"], "not_found");

    let wrong_method = http_request("POST", &format!("{}/acme/.well-known/jwks.json", d.base));
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.json()["error"], "method_not_allowed");
    assert!(wrong_method.header("allow").unwrap().contains("GET"));
    // Every route family answers a wrong method the same way, with what is allowed.
    for (method, path, allow) in [
        ("GET", "/acme/api/credentials/abc", "PATCH, DELETE"),
        ("GET", "/acme/token", "POST, OPTIONS"),
        ("DELETE", "/acme/account", "GET, HEAD"),
        ("POST", "/healthz", "GET, HEAD"),
    ] {
        let r = http_request(method, &format!("{}{path}", d.base));
        assert_eq!(r.status, 405, "{method} {path}");
        assert_eq!(r.json()["error"], "method_not_allowed", "{method} {path}");
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
    }

    // A prefix is matched at a path-segment boundary only.
    assert_eq!(d.get("/acmex/.well-known/jwks.json").status, 404);

    let r = d.get("/acme/.well-known/jwks.json");
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("strict-transport-security"), None, "no HSTS over plain HTTP (a proxy's to send)");
    assert_eq!(r.header("referrer-policy"), Some("no-referrer"));

    // The metrics name every tenant: never on the public listener, on its own listener only.
    assert_eq!(d.get("/metrics").status, 404);
    let metrics = d.metrics();
    assert!(metrics.contains("latchkey_http_requests_total{route=\"jwks\",status=\"200\"}"), "{metrics}");
    for line in [format!("latchkey_database_info{{backend=\"{backend}\"}} 1"), "latchkey_database_up 1".to_owned()] {
        assert!(metrics.lines().any(|l| l == line), "{line}: {metrics}");
    }
    assert!(metrics.contains("latchkey_http_request_duration_seconds_bucket"));
    let m = d.metrics_base.clone().unwrap();
    assert_eq!(http_get(&format!("{m}/healthz"), None).status, 404, "the metrics listener serves /metrics only");
    assert_eq!(http_request("POST", &format!("{m}/metrics")).status, 405);
}
