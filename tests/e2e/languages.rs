//! The pages' languages: `ui_locales`, the language menu's cookie, `Accept-Language`, in that
//! order; every page in every shipped language with no message missing.

use crate::oidc_support::*;
use crate::support::*;

const TAGS: [&str; 7] = ["en", "de", "fr", "es", "pt-BR", "ja", "zh-CN"];

fn get_with(url: &str, headers: &[(&str, &str)]) -> Http {
    send_raw("GET", url, None, vec![], headers)
}

/// A page's `<html lang>`.
fn lang(page: &Http) -> String {
    let start = page.body.find("<html lang=\"").unwrap_or_else(|| panic!("not a page: {}", page.body)) + 12;
    page.body[start..].split('"').next().unwrap().to_owned()
}

/// Text of the page that looks like a message id (`word-word`) standing alone where a sentence
/// should be: a catalogue without the message shows its id.
fn leaked_ids(page: &Http) -> Vec<String> {
    let mut ids = vec![];
    for piece in page.body.split('>').skip(1) {
        let text = piece.split('<').next().unwrap_or("").trim();
        let looks_like_id = !text.is_empty()
            && text.contains('-')
            && text.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            && !text.starts_with('-');
        if looks_like_id {
            ids.push(text.to_owned());
        }
    }
    ids
}

#[test]
fn the_language_comes_from_ui_locales_then_the_menu_then_the_browser() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let web = app(&site, "web", &[]);
    let p = pkce();
    let account = format!("{}/account", site.base);

    // The browser's preference, by quality.
    let page = get_with(&account, &[("Accept-Language", "nl, ja;q=0.9, de;q=0.8")]);
    assert_eq!((page.status, lang(&page).as_str()), (200, "ja"));
    assert!(page.body.contains("サインイン"), "{}", page.body);
    // Nothing shipped asked for: English.
    assert_eq!(lang(&get_with(&account, &[("Accept-Language", "nl, tlh")])), "en");

    // The menu: a link per language back to this page; choosing one sets the cookie.
    assert!(page.body.contains("href=\"/acme/locale/fr?back=%2Facme%2Faccount\""), "{}", page.body);
    let chosen = get_with(&format!("{}/locale/fr?back=%2Facme%2Faccount", site.base), &[]);
    assert_eq!((chosen.status, chosen.header("location")), (302, Some("/acme/account")));
    let cookie = chosen.header("set-cookie").unwrap().to_owned();
    assert!(cookie.starts_with("latchkey_locale=fr;") && cookie.contains("Path=/acme"), "{cookie}");
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let page = get_with(&account, &[("Accept-Language", "ja"), ("Cookie", &cookie)]);
    assert_eq!(lang(&page), "fr", "the menu's choice comes before the browser's");
    // Back only to this tenant's own pages; an unknown language sets nothing.
    for back in ["https://evil.example/", "//evil.example/x", "/other/account", "/acme//evil.example"] {
        let r = get_with(&format!("{}/locale/de?{}", site.base, query(&[("back", back)])), &[]);
        assert_eq!(r.header("location"), Some("/acme/account"), "{back}");
    }
    let r = get_with(&format!("{}/locale/xx?back=%2Facme%2Faccount", site.base), &[]);
    assert!(r.header("set-cookie").is_none());
    // A page answering a form's POST sends the menu back to the account page, which a GET reaches.
    let posted = send_raw(
        "POST",
        &format!("{}/authorize/consent", site.base),
        Some("application/x-www-form-urlencoded"),
        b"request=x&decision=allow".to_vec(),
        &[("Origin", "https://elsewhere.example")],
    );
    assert!(posted.body.contains("href=\"/acme/locale/de?back=%2Facme%2Faccount\""), "{}", posted.body);

    // ui_locales of the authorization request comes first, on the login page and after it.
    let login = get_with(&authorize_url(&site, &web, &p, &[("ui_locales", "tlh es-419")]), &[("Cookie", &cookie)]);
    assert_eq!(lang(&login), "es");
    assert!(login.body.contains("Continuar con una llave de acceso"), "{}", login.body);
    let id = request_id(&login);
    let again = get_with(&format!("{}/authorize/resume?request={id}", site.base), &[("Cookie", &cookie)]);
    assert_eq!(lang(&again), "es", "the pending request keeps its languages");
}

#[test]
fn every_page_speaks_every_shipped_language_with_no_message_missing() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let (mut soft, _) = site.user_with_passkey("ada@acme.test");
    let third = app(&site, "web", &["--consent", "explicit"]);
    let p = pkce();
    let cookie = site.sign_in(&mut soft, Some("ada@acme.test"), &Default::default()).session_cookie().unwrap();
    let invite = site.invite("bob@acme.test", "Bob");
    for tag in TAGS {
        let accept = [("Accept-Language", tag)];
        let signed_in = [("Accept-Language", tag), ("Cookie", cookie.as_str())];
        let pages = [
            ("login", get_with(&authorize_url(&site, &third, &p, &[]), &accept)),
            ("consent", get_with(&authorize_url(&site, &third, &p, &[]), &signed_in)),
            ("select", get_with(&authorize_url(&site, &third, &p, &[("prompt", "select_account")]), &signed_in)),
            ("account", get_with(&format!("{}/account", site.base), &signed_in)),
            ("signin", get_with(&format!("{}/account", site.base), &accept)),
            ("invite", get_with(&format!("{}/invite/{invite}", site.base), &accept)),
            ("expired link", get_with(&format!("{}/invite/nope", site.base), &accept)),
            ("device", get_with(&format!("{}/device", site.base), &accept)),
            ("sign out", get_with(&format!("{}/logout", site.base), &signed_in)),
            ("expired", get_with(&format!("{}/authorize/resume?request=gone", site.base), &accept)),
        ];
        for (name, page) in &pages {
            assert_eq!(lang(page), tag, "{name}");
            let leaked = leaked_ids(page);
            assert!(leaked.is_empty(), "{tag} {name}: {leaked:?}");
            assert!(page.body.contains("data-messages=\"{"), "{tag} {name}: the script's messages");
        }
    }
}

#[test]
fn a_tenant_brand_names_colours_and_sets_the_default_language_of_its_pages() {
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let account = format!("{}/account", site.base);

    // Refused, nothing stored: a colour below WCAG AA against white, a language not shipped.
    let before = d.snapshot_of(&["tenants"]);
    for (args, why) in [
        (vec!["--color", "#ffd700"], "4.5:1"),
        (vec!["--color", "blue"], "not a colour"),
        (vec!["--default-locale", "tlh"], "not one Latchkey speaks"),
        (vec!["--display-name", ""], "1-100"),
    ] {
        let r = d.cli(&[vec!["tenant", "brand", "acme"], args.clone()].concat());
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.stderr.contains("invalid_input") && r.stderr.contains(why), "{args:?}: {}", r.stderr);
    }
    assert_eq!(d.snapshot_of(&["tenants"]), before, "nothing stored");

    let t = d
        .cli(&[
            "tenant",
            "brand",
            "acme",
            "--display-name",
            "Acme Login",
            "--color",
            "#0B5FBF",
            "--default-locale",
            "de",
            "-o",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(
        (t["display_name"].as_str(), t["accent_color"].as_str(), t["default_locale"].as_str()),
        (Some("Acme Login"), Some("#0b5fbf"), Some("de"))
    );
    // A browser that names no shipped language gets the tenant's; the name and colour show.
    let page = get_with(&account, &[("Accept-Language", "nl")]);
    assert_eq!(lang(&page), "de");
    assert!(page.body.contains("<p class=\"tenant\">Acme Login</p>") && page.body.contains("· Acme Login</title>"));
    assert!(page.body.contains("href=\"/acme/brand.css?v=0b5fbf\""), "{}", page.body);
    let css = get_with(&format!("{}/brand.css?v=0b5fbf", site.base), &[]);
    assert_eq!(css.status, 200);
    assert!(css.body.starts_with(":root { --accent: #0b5fbf; --accent-bg: #0b5fbf; }"), "{}", css.body);
    assert!(css.header("cache-control").unwrap().contains("max-age"));
    assert_eq!(lang(&get_with(&account, &[("Accept-Language", "fr")])), "fr", "the browser's own comes first");

    // Cleared: the default colour again (no brand stylesheet), the rest kept.
    let t = d.cli(&["tenant", "brand", "acme", "--color", "none", "-o", "json"]).ok().json();
    assert!(t["accent_color"].is_null() && t["display_name"] == "Acme Login", "{t}");
    assert!(!get_with(&account, &[]).body.contains("brand.css"));
    let events = d.cli(&["audit", "--tenant", "acme", "--action", "tenant.brand", "-o", "json"]).ok().json();
    assert_eq!(events.as_array().map(Vec::len), Some(6), "every attempt is audited: {events}");

    // As code: export carries the brand, applying it changes nothing, a new colour is planned.
    let exported = d.cli(&["export", "--tenant", "acme"]).ok().stdout;
    assert!(
        exported.contains("display_name = \"Acme Login\"") && exported.contains("default_locale = \"de\""),
        "{exported}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("acme.toml");
    std::fs::write(&file, &exported).unwrap();
    let f = file.to_str().unwrap();
    assert!(d.cli(&["apply", "-f", f]).ok().stdout.contains("No changes"));
    std::fs::write(&file, exported.replace("default_locale = \"de\"", "default_locale = \"ja\"\ncolor = \"#7a1fa2\""))
        .unwrap();
    let plan = d.cli(&["apply", "-f", f, "--dry-run", "-o", "json"]).ok().json();
    assert_eq!(
        plan["plan"][0]["changes"],
        serde_json::json!([
            {"field": "color", "old": "none", "new": "#7a1fa2"},
            {"field": "default_locale", "old": "de", "new": "ja"}
        ])
    );
    d.cli(&["apply", "-f", f]).ok();
    assert_eq!(lang(&get_with(&account, &[])), "ja");
    // A colour that fails contrast refuses the whole file.
    std::fs::write(&file, exported.replace("default_locale = \"de\"", "color = \"#ffff00\"")).unwrap();
    let r = d.cli(&["apply", "-f", f]);
    assert!(r.code == 1 && r.stderr.contains("4.5:1"), "{}", r.stderr);
}

/// A plain-drawing SVG logo.
pub const SVG_LOGO: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><title>Acme</title><circle cx="16" cy="16" r="14" fill="#0b5fbf"/></svg>"##;

#[test]
fn a_tenant_logo_is_a_png_or_a_plain_svg_beside_its_name_and_an_app_signs_in_under_its_own() {
    use base64::Engine as _;
    let d = TestDaemon::start();
    let site = Site::new(&d, "acme", &[]);
    let account = format!("{}/account", site.base);
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_str().unwrap().to_owned()
    };
    let png = base64::engine::general_purpose::STANDARD.decode(crate::backchannel::PNG_1X1).unwrap();
    let mut huge = png.clone();
    huge.resize(300 * 1024, 0);

    // Refused with the reason, nothing stored: script, an event handler, a reference outside the
    // file, a DTD, a GIF, more than 256 KiB.
    let before = d.snapshot_of(&["tenants", "tenant_logos"]);
    for (name, bytes, why) in [
        ("script.svg", SVG_LOGO.replace("<title>", "<script>alert(1)</script><title>").into_bytes(), "<script>"),
        ("onload.svg", SVG_LOGO.replace("<circle", "<circle onload=\"alert(1)\"").into_bytes(), "event handler"),
        (
            "external.svg",
            SVG_LOGO.replace("<title>", "<use href=\"https://evil.example/a.svg#x\"/><title>").into_bytes(),
            "refers to",
        ),
        ("dtd.svg", format!("<!DOCTYPE svg [<!ENTITY a \"b\">]>{SVG_LOGO}").into_bytes(), "well-formed"),
        ("logo.gif", b"GIF89a\x01\x00\x01\x00".to_vec(), "not a PNG"),
        ("huge.png", huge, "at most 256 KiB"),
    ] {
        let r = d.cli(&["tenant", "brand", "acme", "--logo", &file(name, &bytes)]);
        assert_eq!(r.code, 1, "{name}");
        assert!(r.stderr.contains("invalid_input") && r.stderr.contains(why), "{name}: {}", r.stderr);
    }
    assert_eq!(d.snapshot_of(&["tenants", "tenant_logos"]), before, "nothing stored");

    // An SVG: beside the name on every page, served as it was given under a policy that lets it
    // do nothing but draw, named by its hash so it may be cached.
    let t =
        d.cli(&["tenant", "brand", "acme", "--logo", &file("acme.svg", SVG_LOGO.as_bytes()), "-o", "json"]).ok().json();
    let sha = t["logo_sha256"].as_str().unwrap().to_owned();
    assert_eq!(sha.len(), 64);
    let page = get_with(&account, &[]);
    let img = format!("<img class=\"tenant-logo\" src=\"/acme/logo?v={}\" alt=\"\" height=\"32\">", &sha[..16]);
    assert!(page.body.contains(&img), "{}", page.body);
    let logo = get_with(&format!("{}/logo?v={}", site.base, &sha[..16]), &[]);
    assert_eq!((logo.status, logo.header("content-type")), (200, Some("image/svg+xml")));
    assert_eq!(logo.body, SVG_LOGO);
    assert!(logo.header("content-security-policy").unwrap().contains("sandbox"));
    assert!(logo.header("cache-control").unwrap().contains("max-age"));
    assert!(d.cli(&["tenant", "show", "acme"]).ok().stdout.contains(&sha));

    // A PNG replaces it; `none` removes it.
    let t = d.cli(&["tenant", "brand", "acme", "--logo", &file("acme.png", &png), "-o", "json"]).ok().json();
    assert_ne!(t["logo_sha256"].as_str(), Some(sha.as_str()));
    assert_eq!(get_with(&format!("{}/logo", site.base), &[]).header("content-type"), Some("image/png"));
    let t = d.cli(&["tenant", "brand", "acme", "--logo", "none", "-o", "json"]).ok().json();
    assert!(t["logo_sha256"].is_null(), "{t}");
    assert_eq!(get_with(&format!("{}/logo", site.base), &[]).status, 404);
    assert!(!get_with(&account, &[]).body.contains("tenant-logo"));
    assert!(d.sql().rows("SELECT tenant_id FROM tenant_logos").is_empty());

    // An app's login page is "Sign in to" it, under its logo, in the page's language.
    let app = app(&site, "web", &["--logo", &file("portal.png", &png)]);
    let url = authorize_url(&site, &app, &pkce(), &[]);
    let login = get(&url, None);
    assert!(login.body.contains("<h1>Sign in to <strong>Portal</strong></h1>"), "{}", login.body);
    assert!(login.body.contains("id=\"login-logo\"") && login.body.contains("alt=\"Portal logo\""), "{}", login.body);
    assert!(login.body.contains("<title>Sign in to Portal · "), "{}", login.body);
    // Its script and style sheet are named by their content and cached for good.
    let script = login.body.split("src=\"/acme/assets/latchkey.js?v=").nth(1).expect("a versioned script");
    let script = get(&format!("{}/assets/latchkey.js?v={}", site.base, &script[..12]), None);
    assert_eq!(script.header("cache-control"), Some("public, max-age=31536000, immutable"));
    // Another version (a page of a node on another build) or none: asked again each time.
    for v in ["", "?v=000000000000"] {
        let other = get(&format!("{}/assets/latchkey.js{v}", site.base), None);
        assert_eq!((other.status, other.header("cache-control")), (200, Some("no-cache")), "{v}");
    }
    assert!(login.body.contains("href=\"/acme/assets/latchkey.css?v="), "{}", login.body);
    // An error page's message is an alert.
    for path in ["/invite/not-an-invitation", "/login/nowhere/callback?code=x&state=y", "/authorize/resume?request=x"] {
        let error = get(&format!("{}{path}", site.base), None);
        assert!(error.body.contains("id=\"error-message\" role=\"alert\""), "{path}: {}", error.body);
    }
    let login = get(&authorize_url(&site, &app, &pkce(), &[("ui_locales", "ja")]), None);
    assert!(login.body.contains("<h1><strong>Portal</strong> にサインイン</h1>"), "{}", login.body);
}
