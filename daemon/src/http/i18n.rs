//! The language of a request's pages: the first shipped locale of `ui_locales`, the language
//! menu's cookie, `Accept-Language`, then the default. The catalogues are the domain's
//! ([`latchkey_domain::i18n`]).

use hyper::HeaderMap;

pub use latchkey_domain::i18n::{LOCALES, Locale, NATIVE_NAMES, Tr};

/// The cookie the language menu sets.
pub const COOKIE: &str = "latchkey_locale";

/// The locale of a request: the first shipped one of `ui_locales` (space-separated, OpenID
/// Connect), then the language menu's cookie, then `Accept-Language` by its quality values, then
/// `default` (the tenant's).
pub fn negotiate(ui_locales: Option<&str>, headers: &HeaderMap, default: Locale) -> Locale {
    if let Some(l) = ui_locales.and_then(|v| v.split_whitespace().find_map(Locale::parse)) {
        return l;
    }
    if let Some(l) = cookie(headers).and_then(|v| Locale::parse(&v)) {
        return l;
    }
    let accept = headers.get(hyper::header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()).unwrap_or("");
    accept_language(accept).unwrap_or(default)
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    headers.get_all(hyper::header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(
        |pair| {
            pair.trim()
                .trim_start_matches("__Host-")
                .strip_prefix(COOKIE)
                .and_then(|rest| rest.strip_prefix('='))
                .map(str::to_owned)
        },
    )
}

/// The language of a request's pages (its `ui_locales` query parameter, the cookie,
/// `Accept-Language`, then the tenant's default), and where the language menu comes back to: the
/// request's own path and query, under the tenant (the account page after a form's POST).
pub fn of_request(req: &hyper::Request<impl Sized>, tenant: &latchkey_domain::registry::TenantRuntime) -> (Tr, String) {
    let prefix = tenant.path_prefix.as_str();
    let query = req.uri().query().unwrap_or("");
    let ui_locales = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "ui_locales").map(|(_, v)| v);
    let tr = Tr(negotiate(ui_locales.as_deref(), req.headers(), tenant.default_locale));
    // Back to the page itself when a GET can fetch it again; a form's answer goes to the account
    // page instead (its path answers POST only).
    let here = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let again = req.method() == hyper::Method::GET && here.len() <= 2048 && here.starts_with(prefix);
    let here = if again { here.to_owned() } else { format!("{prefix}/account") };
    (tr, here)
}

/// The shipped locale `Accept-Language` prefers most (RFC 9110 §12.5.4), if any.
fn accept_language(header: &str) -> Option<Locale> {
    let mut best: Option<(u16, Locale)> = None;
    for item in header.split(',').take(32) {
        let mut parts = item.split(';');
        let Some(locale) = parts.next().and_then(Locale::parse) else { continue };
        let q = parts
            .find_map(|p| p.trim().strip_prefix("q="))
            .and_then(|q| q.trim().parse::<f32>().ok())
            .map_or(1000, |q| (q.clamp(0.0, 1.0) * 1000.0) as u16);
        if q > 0 && best.is_none_or(|(b, _)| q > b) {
            best = Some((q, locale));
        }
    }
    best.map(|(_, l)| l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use latchkey_domain::i18n::message_ids;

    #[test]
    fn every_message_the_code_names_exists() {
        // The ids the page code asks for: string literals passed to `t(` or `with(`.
        let english = message_ids(LOCALES[0].2);
        let sources = [
            include_str!("pages.rs"),
            include_str!("html.rs"),
            include_str!("device.rs"),
            include_str!("errors.rs"),
            include_str!("../../assets/latchkey.js"),
            include_str!("../../../crates/domain/src/mail.rs"),
        ];
        let mut named = vec![];
        for source in sources {
            for marker in [".t(\"", ".with(\"", "t('"] {
                for (at, _) in source.match_indices(marker) {
                    // The script's `t('…')`, not `createElement('…')`.
                    let before = source[..at].chars().next_back().unwrap_or(' ');
                    if marker == "t('" && (before.is_alphanumeric() || before == '_' || before == '.') {
                        continue;
                    }
                    let piece = &source[at + marker.len()..];
                    let end = piece.find(['"', '\'']).unwrap_or(0);
                    named.push(piece[..end].to_owned());
                }
            }
        }
        assert!(named.len() > 50, "{}", named.len());
        let unknown: Vec<_> = named.iter().filter(|id| !english.contains(id)).collect();
        assert!(unknown.is_empty(), "messages named in code but not in en.ftl: {unknown:?}");
    }

    #[test]
    fn the_locale_comes_from_ui_locales_then_the_cookie_then_accept_language_then_the_default() {
        let mut h = HeaderMap::new();
        assert_eq!(negotiate(None, &h, Locale::Fr), Locale::Fr);
        h.insert(hyper::header::ACCEPT_LANGUAGE, "da, de-AT;q=0.8, ja;q=0.9, *;q=0.1".parse().unwrap());
        assert_eq!(negotiate(None, &h, Locale::En), Locale::Ja);
        h.insert(hyper::header::COOKIE, "a=b; latchkey_locale=pt-BR".parse().unwrap());
        assert_eq!(negotiate(None, &h, Locale::En), Locale::PtBr);
        assert_eq!(negotiate(Some("tlh zh-Hans-CN"), &h, Locale::En), Locale::ZhCn);
        assert_eq!(negotiate(Some("zh-TW"), &h, Locale::En), Locale::PtBr, "traditional Chinese is not offered");
        assert_eq!(accept_language("de;q=0, fr;q=0.5"), Some(Locale::Fr));
        h.insert(hyper::header::COOKIE, "__Host-latchkey_locale=ja".parse().unwrap());
        assert_eq!(negotiate(None, &h, Locale::En), Locale::Ja, "the cookie of a tenant at an https root");
    }
}
