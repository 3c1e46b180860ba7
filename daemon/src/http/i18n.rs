//! The languages of the hosted pages: Fluent catalogues compiled into the binary (`locales/`),
//! one per locale, and the choice of locale for a request.
//!
//! A page asks [`Tr::t`] for each string by its message id; English is the reference catalogue and
//! every other one has exactly its messages (a unit test fails otherwise), so a missing
//! translation cannot ship. A message that could not be formatted shows its id, never a panic.

use std::sync::LazyLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};
use hyper::HeaderMap;
use unic_langid::LanguageIdentifier;

/// The locales the pages are shipped in, English first (the fallback).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Locale {
    #[default]
    En,
    De,
    Fr,
    Es,
    PtBr,
    Ja,
    ZhCn,
}

/// Every locale with its catalogue, in the order of [`Locale`].
pub const LOCALES: [(Locale, &str, &str); 7] = [
    (Locale::En, "en", include_str!("../../locales/en.ftl")),
    (Locale::De, "de", include_str!("../../locales/de.ftl")),
    (Locale::Fr, "fr", include_str!("../../locales/fr.ftl")),
    (Locale::Es, "es", include_str!("../../locales/es.ftl")),
    (Locale::PtBr, "pt-BR", include_str!("../../locales/pt-BR.ftl")),
    (Locale::Ja, "ja", include_str!("../../locales/ja.ftl")),
    (Locale::ZhCn, "zh-CN", include_str!("../../locales/zh-CN.ftl")),
];

/// Each language by its own name, for the language menu.
pub const NATIVE_NAMES: [&str; 7] =
    ["English", "Deutsch", "Français", "Español", "Português (Brasil)", "日本語", "简体中文"];

impl Locale {
    fn index(self) -> usize {
        self as usize
    }

    /// The BCP 47 tag (`<html lang>`, the cookie's value).
    pub fn tag(self) -> &'static str {
        LOCALES[self.index()].1
    }

    /// The shipped locale a language tag asks for, if any: an exact match first (`pt-BR`), then
    /// by language (`de-AT` → German, `pt-PT` → Portuguese (Brazil), `zh-Hans-CN`/`zh-SG` →
    /// Simplified Chinese; `zh-TW` and `zh-Hant` are not offered).
    pub fn parse(tag: &str) -> Option<Locale> {
        let id: LanguageIdentifier = tag.trim().parse().ok()?;
        let language = id.language.as_str();
        let traditional = id.script.is_some_and(|s| s.as_str() == "Hant")
            || id.region.is_some_and(|r| matches!(r.as_str(), "TW" | "HK" | "MO"));
        match language {
            "en" => Some(Locale::En),
            "de" => Some(Locale::De),
            "fr" => Some(Locale::Fr),
            "es" => Some(Locale::Es),
            "pt" => Some(Locale::PtBr),
            "ja" => Some(Locale::Ja),
            "zh" if !traditional => Some(Locale::ZhCn),
            _ => None,
        }
    }
}

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
/// `Accept-Language`; English otherwise, until tenants choose a default), and where the language
/// menu comes back to: the request's own path and query, under the tenant (`prefix`).
pub fn of_request(req: &hyper::Request<impl Sized>, prefix: &str) -> (Tr, String) {
    let query = req.uri().query().unwrap_or("");
    let ui_locales = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "ui_locales").map(|(_, v)| v);
    let tr = Tr(negotiate(ui_locales.as_deref(), req.headers(), Locale::default()));
    let here = req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let here =
        if here.len() <= 2048 && here.starts_with(prefix) { here.to_owned() } else { format!("{prefix}/account") };
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

static BUNDLES: LazyLock<Vec<FluentBundle<FluentResource>>> = LazyLock::new(|| {
    LOCALES
        .iter()
        .map(|(_, tag, source)| {
            let id: LanguageIdentifier = tag.parse().unwrap_or_default();
            let mut bundle = FluentBundle::new_concurrent(vec![id]);
            // Plain text in HTML: no bidi isolation marks around values (no right-to-left
            // locale is shipped).
            bundle.set_use_isolating(false);
            // A catalogue that does not parse is caught by the unit tests; what parsed is used.
            let resource = FluentResource::try_new((*source).to_owned()).unwrap_or_else(|(r, _)| r);
            let _ = bundle.add_resource(resource);
            bundle
        })
        .collect()
});

/// The strings of one locale.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tr(pub Locale);

impl Tr {
    pub fn locale(self) -> Locale {
        self.0
    }

    /// The message `id`, without variables.
    pub fn t(self, id: &str) -> String {
        self.format(id, None)
    }

    /// The message `id` with its variables.
    pub fn with(self, id: &str, args: &[(&str, &str)]) -> String {
        let mut a = FluentArgs::new();
        for (k, v) in args {
            a.set(*k, *v);
        }
        self.format(id, Some(&a))
    }

    fn format(self, id: &str, args: Option<&FluentArgs<'_>>) -> String {
        let bundle = &BUNDLES[self.0.index()];
        let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
            return id.to_owned();
        };
        let mut errors = vec![];
        bundle.format_pattern(pattern, args, &mut errors).into_owned()
    }

    /// Every `js-…` message, for the page script (which shows them as they are).
    pub fn script_messages(self) -> String {
        let source = LOCALES[self.0.index()].2;
        let ids = message_ids(source);
        let map: serde_json::Map<String, serde_json::Value> = ids
            .into_iter()
            .filter(|id| id.starts_with("js-"))
            .map(|id| {
                let text = self.t(&id);
                (id, serde_json::Value::String(text))
            })
            .collect();
        serde_json::Value::Object(map).to_string()
    }
}

/// The message ids a catalogue defines, in order.
fn message_ids(source: &str) -> Vec<String> {
    source
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        .filter_map(|l| l.split_once(" =").map(|(id, _)| id.trim().to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_parses_and_has_exactly_the_english_messages() {
        let english = message_ids(LOCALES[0].2);
        assert!(english.len() > 100, "{}", english.len());
        for (locale, tag, source) in LOCALES {
            if let Err((_, errors)) = FluentResource::try_new(source.to_owned()) {
                panic!("{tag}.ftl does not parse: {errors:?}");
            }
            let ids = message_ids(source);
            let missing: Vec<_> = english.iter().filter(|id| !ids.contains(id)).collect();
            let extra: Vec<_> = ids.iter().filter(|id| !english.contains(id)).collect();
            assert!(missing.is_empty() && extra.is_empty(), "{tag}: missing {missing:?}, not in English {extra:?}");
            // Each message formats, with its variables, to something other than its id.
            for id in &english {
                let text = Tr(locale).with(
                    id,
                    &[("app", "A"), ("name", "N"), ("email", "e"), ("provider", "P"), ("tenant", "T"), ("date", "D")],
                );
                assert!(!text.is_empty() && text != *id, "{tag}: {id}");
            }
        }
    }

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
        assert_eq!(Locale::parse("es-419"), Some(Locale::Es));
        assert_eq!(Locale::parse("x"), None);
        assert_eq!(accept_language("de;q=0, fr;q=0.5"), Some(Locale::Fr));
    }

    #[test]
    fn a_message_with_variables_and_an_unknown_one() {
        assert_eq!(Tr(Locale::De).with("select-continue-as", &[("name", "Ada")]), "Weiter als Ada");
        assert_eq!(Tr(Locale::Ja).with("consent-heading", &[("app", "Portal")]), "Portal を許可しますか？");
        assert_eq!(Tr(Locale::En).t("no-such-message"), "no-such-message");
        let js: serde_json::Value = serde_json::from_str(&Tr(Locale::Fr).script_messages()).unwrap();
        assert_eq!(js["js-save"], "Enregistrer");
        assert!(js.get("consent-allow").is_none());
    }
}
