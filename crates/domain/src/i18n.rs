//! The languages Latchkey speaks to people: Fluent catalogues compiled into the binary
//! (`locales/` at the repository's root), one per locale, for the hosted pages, their script and
//! the e-mails. The daemon picks a request's locale (`http::i18n`); an invitee's is stored with
//! them.
//!
//! Strings are asked for by message id ([`Tr::t`]); English is the reference catalogue and every
//! other one has exactly its messages (a unit test fails otherwise), so a missing translation
//! cannot ship. A message that could not be formatted shows its id, never a panic.

use std::sync::LazyLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource};
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
    (Locale::En, "en", include_str!("../../../locales/en.ftl")),
    (Locale::De, "de", include_str!("../../../locales/de.ftl")),
    (Locale::Fr, "fr", include_str!("../../../locales/fr.ftl")),
    (Locale::Es, "es", include_str!("../../../locales/es.ftl")),
    (Locale::PtBr, "pt-BR", include_str!("../../../locales/pt-BR.ftl")),
    (Locale::Ja, "ja", include_str!("../../../locales/ja.ftl")),
    (Locale::ZhCn, "zh-CN", include_str!("../../../locales/zh-CN.ftl")),
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

    /// Every `js-…` message as a JSON object, for the page script (which shows them as they are).
    pub fn script_messages(self) -> &'static str {
        &SCRIPT_MESSAGES[self.0.index()]
    }
}

/// Each locale's `js-…` messages as one JSON object, made once: every page carries its
/// locale's in `data-messages`, and formatting them per page would cost each render.
static SCRIPT_MESSAGES: LazyLock<Vec<String>> = LazyLock::new(|| {
    LOCALES
        .iter()
        .map(|(locale, _, source)| {
            let map: serde_json::Map<String, serde_json::Value> = message_ids(source)
                .into_iter()
                .filter(|id| id.starts_with("js-"))
                .map(|id| {
                    let text = Tr(*locale).t(&id);
                    (id, serde_json::Value::String(text))
                })
                .collect();
            serde_json::Value::Object(map).to_string()
        })
        .collect()
});

/// The message ids a catalogue defines, in order.
pub fn message_ids(source: &str) -> Vec<String> {
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
            let vars = [
                ("app", "A"),
                ("name", "N"),
                ("email", "e"),
                ("provider", "P"),
                ("tenant", "T"),
                ("date", "D"),
                ("account", "c"),
                ("url", "u"),
            ];
            for id in &english {
                let text = Tr(locale).with(id, &vars);
                assert!(!text.is_empty() && text != *id && !text.contains("{$"), "{tag}: {id}: {text}");
            }
        }
    }

    #[test]
    fn a_message_with_variables_and_an_unknown_one() {
        assert_eq!(Tr(Locale::De).with("select-continue-as", &[("name", "Ada")]), "Weiter als Ada");
        assert_eq!(Tr(Locale::Ja).with("consent-heading", &[("app", "Portal")]), "Portal を許可しますか？");
        assert_eq!(Tr(Locale::En).t("no-such-message"), "no-such-message");
        let js: serde_json::Value = serde_json::from_str(Tr(Locale::Fr).script_messages()).unwrap();
        assert_eq!(js["js-save"], "Enregistrer");
        assert!(js.get("consent-allow").is_none());
        assert_eq!(Locale::parse("es-419"), Some(Locale::Es));
        assert_eq!(Locale::parse("zh-TW"), None);
        assert_eq!(Locale::parse("x"), None);
    }
}
