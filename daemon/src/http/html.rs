//! The page layout shared by every server-rendered page, and its static assets. Pages carry no
//! inline script: data travels in `data-` attributes, behaviour in `/assets/latchkey.js`, so the
//! Content-Security-Policy can forbid everything else.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use maud::{DOCTYPE, Markup};

use super::i18n::{LOCALES, NATIVE_NAMES, Tr};
use super::response::{bytes, with_header};
use super::{Body, Cx};
use latchkey_domain::crypto::sha256;
use latchkey_domain::registry::TenantRuntime;
use std::sync::LazyLock;

const JS: &str = include_str!("../../assets/latchkey.js");
const CSS: &str = include_str!("../../assets/latchkey.css");

pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                       connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The static files under `/assets/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Script = 0,
    Stylesheet = 1,
}

/// For files named by their content (a hash or a colour in the query): cached for a year, never
/// revalidated; a change is a new URL.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Caches `r` for good when the request's `v` names the version being served; otherwise (no
/// version, or another: a page from a node on another build or behind on a change) the browser
/// must ask again, so a stale version is never kept under a new name.
pub fn cached_as(r: Response<Body>, query: Option<&str>, current: &str) -> Response<Body> {
    let asked = query.unwrap_or("").split('&').find_map(|pair| pair.strip_prefix("v="));
    let policy = if asked == Some(current) { IMMUTABLE } else { "no-cache" };
    with_header(r, header::CACHE_CONTROL, policy)
}

impl Asset {
    pub fn from_file_name(name: &str) -> Option<Asset> {
        match name {
            "latchkey.js" => Some(Asset::Script),
            "latchkey.css" => Some(Asset::Stylesheet),
            _ => None,
        }
    }

    fn content(self) -> &'static str {
        match self {
            Asset::Script => JS,
            Asset::Stylesheet => CSS,
        }
    }

    /// The file's version: the start of its SHA-256, which the pages put in its URL.
    pub fn version(self) -> &'static str {
        static VERSIONS: LazyLock<[String; 2]> = LazyLock::new(|| {
            let v = |text: &str| sha256(text.as_bytes()).iter().take(6).map(|b| format!("{b:02x}")).collect();
            [v(JS), v(CSS)]
        });
        &VERSIONS[self as usize]
    }
}

/// The version the pages name a logo by in its URL: the start (16 hex digits) of its SHA-256.
pub fn logo_version(sha: &str) -> &str {
    sha.get(..16).unwrap_or(sha)
}

/// A static file. The pages name it with its version, so it is cached for good ([`cached_as`]).
pub fn asset(a: Asset, query: Option<&str>) -> Response<Body> {
    let ct = match a {
        Asset::Script => "text/javascript; charset=utf-8",
        Asset::Stylesheet => "text/css; charset=utf-8",
    };
    cached_as(bytes(StatusCode::OK, ct, a.content()), query, a.version())
}

/// What a page's `<main>` carries for the script, as `data-` attributes (each omitted when
/// `None`): the page's values travel here, never in inline script.
#[derive(Debug, Default, Clone, Copy)]
pub struct Data<'a> {
    pub token: Option<&'a str>,
    pub email: Option<&'a str>,
    pub name: Option<&'a str>,
    pub request: Option<&'a str>,
    /// Where the page goes on once done (same origin).
    pub next: Option<&'a str>,
}

/// One page: its title, its kind (`data-page`, which the script dispatches on), its data.
#[derive(Debug, Default, Clone, Copy)]
pub struct Page<'a> {
    pub title: &'a str,
    pub kind: &'a str,
    pub data: Data<'a>,
    /// `Referrer-Policy: same-origin` for this page (the pages' header says `no-referrer`), for a
    /// form whose POST must show its origin.
    pub referrer_same_origin: bool,
    /// The page's language.
    pub tr: Tr,
    /// Where the language menu comes back to (no menu without it).
    pub here: Option<&'a str>,
}

impl<'a> Page<'a> {
    pub fn new(title: &'a str, kind: &'a str) -> Page<'a> {
        Page { title, kind, ..Page::default() }
    }

    /// A page of `cx`'s request, in its language (`tr`), with the language menu.
    pub fn of(cx: &'a Cx<'_>, tr: Tr, title: &'a str, kind: &'a str) -> Page<'a> {
        Page { title, kind, tr, here: Some(&cx.here), ..Page::default() }
    }

    pub fn with(self, data: Data<'a>) -> Page<'a> {
        Page { data, ..self }
    }
}

/// A whole page in the tenant's layout around `main`. Every value is escaped by the template
/// (maud); `main` is markup built the same way.
pub fn render(tenant: &TenantRuntime, page: &Page<'_>, main: Markup) -> String {
    let prefix = tenant.path_prefix.as_str();
    let d = page.data;
    let tr = page.tr;
    maud::html! {
        (DOCTYPE)
        html lang=(tr.locale().tag()) {
            head {
                meta charset="utf-8";
                @if page.referrer_same_origin {
                    meta name="referrer" content="same-origin";
                }
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (page.title) " · " (tenant.display_name) }
                link rel="stylesheet" href={ (prefix) "/assets/latchkey.css?v=" (Asset::Stylesheet.version()) };
                @if let Some(accent) = &tenant.accent_color {
                    // Versioned by the colour itself: a new colour is a new URL.
                    link rel="stylesheet" href={ (prefix) "/brand.css?v=" (accent.trim_start_matches('#')) };
                }
                script src={ (prefix) "/assets/latchkey.js?v=" (Asset::Script.version()) } defer {}
            }
            body {
                main #app data-page=(page.kind) data-base=(prefix) data-token=[d.token] data-email=[d.email]
                    data-name=[d.name] data-request=[d.request] data-next=[d.next] data-messages=(tr.script_messages()) {
                    p.tenant {
                        @if let Some(sha) = &tenant.logo_sha {
                            // Beside the name, which says it: decorative (empty alt).
                            img.tenant-logo src={ (prefix) "/logo?v=" (logo_version(sha)) } alt="" height="32";
                        }
                        (tenant.display_name)
                    }
                    (main)
                    // The script says what a passkey prompt did here; an error is an alert.
                    p #status .status role="status" aria-live="polite" {}
                    noscript { p.status.error { (tr.t("noscript")) } }
                    @if let Some(here) = page.here {
                        nav.languages aria-label=(tr.t("lang-menu")) {
                            ul {
                                @for (i, (locale, tag, _)) in LOCALES.iter().enumerate() {
                                    li {
                                        a href={ (prefix) "/locale/" (tag) "?back=" (encoded(here)) } lang=(tag) hreflang=(tag)
                                            aria-current=[(*locale == tr.locale()).then_some("true")] {
                                            (NATIVE_NAMES[i])
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    .into_string()
}

fn encoded(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// An HTML response with the pages' security headers.
pub fn html(status: StatusCode, body: String) -> Response<Body> {
    let mut r = bytes(status, "text/html; charset=utf-8", body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_absent_data_omitted() {
        let row = latchkey_store::tenants::TenantRow {
            id: latchkey_store::TenantId(1),
            slug: "acme".into(),
            name: "A<b>".into(),
            base_url: "https://id.example.com/acme".into(),
            rp_id: "id.example.com".into(),
            registration: latchkey::admin::Registration::Invite,
            created_at: 0,
            brand: Default::default(),
            attestation: Default::default(),
        };
        let tenant = TenantRuntime::routing(&row, "https://id.example.com").unwrap();
        let data = Data { email: Some(r#"x"><script>'&"#), ..Data::default() };
        let page = render(&tenant, &Page::new("T", "k").with(data), maud::html! { p { "ok" } });
        assert!(page.contains(r#"data-email="x&quot;&gt;&lt;script&gt;'&amp;""#), "{page}");
        assert!(page.contains("<p class=\"tenant\">A&lt;b&gt;</p>"), "{page}");
        assert!(!page.contains("data-token") && !page.contains("referrer"), "{page}");
    }

    #[test]
    fn only_known_assets() {
        assert_eq!(Asset::from_file_name("latchkey.js"), Some(Asset::Script));
        assert_eq!(Asset::from_file_name("../latchkey.js"), None);
    }
}
