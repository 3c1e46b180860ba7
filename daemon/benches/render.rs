//! Benchmark: rendering a hosted page in each of the seven languages. The login page of an
//! authorization request (the page most people see) is rendered by the daemon's own function —
//! template, catalogue lookups with arguments, the language menu, the script's messages — for a
//! branded tenant and an app with a logo and two social providers; the HTTP layer is not in it.
//! Prints, per language, the first render (the catalogue parsed on first use) and p50/p99/max of
//! 20,000 renders after it, and the page's size. Asserts nothing about speed.
//!
//! Run: `cargo bench -p latchkeyd --bench render`.

use std::time::{Duration, Instant};

use latchkey_domain::oidc::authorize::AuthorizationRequest;
use latchkey_domain::registry::TenantRuntime;
use latchkey_store::tenants::{Brand, TenantRow};
use latchkeyd::http::i18n::{LOCALES, Tr};
use latchkeyd::http::pages::login_page;

const RENDERS: usize = 20_000;

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn fail(why: &str) {
    eprintln!("render bench: {why}");
    std::process::exit(1);
}

fn main() {
    let row = TenantRow {
        id: latchkey_store::TenantId(1),
        slug: "acme".into(),
        name: "Acme".into(),
        base_url: "https://id.example.com/acme".into(),
        rp_id: "id.example.com".into(),
        registration: latchkey::admin::Registration::Invite,
        created_at: 0,
        brand: Brand {
            display_name: Some("Acme Corporation".into()),
            accent_color: Some("#0b5fbf".into()),
            default_locale: None,
            logo_sha: Some("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into()),
        },
        attestation: Default::default(),
    };
    let Ok(tenant) = TenantRuntime::routing(&row, "https://id.example.com") else {
        return fail("the tenant fixture does not route");
    };
    let request: Result<AuthorizationRequest, _> = serde_json::from_value(serde_json::json!({
        "client_id": "b2Yl3mJ0c1Xq9Zk4Hn8Tw6Ra",
        "client_name": "Portal",
        "redirect_uri": "https://portal.example.com/oidc-callback",
        "scope": "openid profile email",
        "state": "af0ifjsldkj",
        "nonce": "n-0S6_WzA2Mj",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "prompt_login": false,
        "max_age": null,
        "login_hint": "ada@acme.example",
        "logo_sha": "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    }));
    let Ok(request) = request else {
        return fail("the authorization request fixture does not parse");
    };
    let providers = vec![("google".to_owned(), "Google".to_owned()), ("github".to_owned(), "GitHub".to_owned())];
    let here = "/acme/authorize?client_id=b2Yl3mJ0c1Xq9Zk4Hn8Tw6Ra&response_type=code";
    let id = "q7b1kq1m0HcC8yW2uC0wqg4P0f3hPq7mSxk2Vb0XyZ4";

    println!("Login page rendered in each language ({RENDERS} renders after the first)");
    println!(
        "{:<7} {:>12} {:>9} {:>9} {:>9} {:>8}",
        "locale", "first (µs)", "p50 (µs)", "p99 (µs)", "max (µs)", "bytes"
    );
    let mut worst_p99 = 0.0f64;
    for (locale, tag, _) in LOCALES {
        let tr = Tr(locale);
        let start = Instant::now();
        let page = login_page(&tenant, tr, here, id, &request, &providers);
        let first = start.elapsed();
        let mut times = Vec::with_capacity(RENDERS);
        let mut bytes = 0usize;
        for _ in 0..RENDERS {
            let start = Instant::now();
            let page = std::hint::black_box(login_page(&tenant, tr, here, id, &request, &providers));
            times.push(start.elapsed());
            bytes = page.len();
        }
        times.sort();
        let at = |q: f64| micros(times[((times.len() as f64 * q) as usize).min(times.len() - 1)]);
        let (p50, p99, max) = (at(0.50), at(0.99), micros(times[times.len() - 1]));
        worst_p99 = worst_p99.max(p99);
        if !page.contains(&format!("lang=\"{tag}\"")) {
            return fail(&format!("the page was not rendered in {tag}"));
        }
        println!("{tag:<7} {:>12.1} {p50:>9.1} {p99:>9.1} {max:>9.1} {bytes:>8}", micros(first));
    }
    println!("worst p99 over the seven languages: {worst_p99:.1} µs (the aim: under 1,000 µs)");
}
