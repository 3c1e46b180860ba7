//! The page layout shared by every server-rendered page, and its static assets. Pages carry no
//! inline script: data travels in `data-` attributes, behaviour in `/assets/latchkey.js`, so the
//! Content-Security-Policy can forbid everything else.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use super::Body;
use super::response::{bytes, with_header};
use crate::registry::TenantRuntime;

const JS: &str = include_str!("../../assets/latchkey.js");
const CSS: &str = include_str!("../../assets/latchkey.css");

pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                       connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The static files under `/assets/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asset {
    Script,
    Stylesheet,
}

impl Asset {
    pub fn from_file_name(name: &str) -> Option<Asset> {
        match name {
            "latchkey.js" => Some(Asset::Script),
            "latchkey.css" => Some(Asset::Stylesheet),
            _ => None,
        }
    }
}

pub fn asset(a: Asset) -> Response<Body> {
    let (ct, body) = match a {
        Asset::Script => ("text/javascript; charset=utf-8", JS),
        Asset::Stylesheet => ("text/css; charset=utf-8", CSS),
    };
    with_header(bytes(StatusCode::OK, ct, body), header::CACHE_CONTROL, "public, max-age=300")
}

/// Escapes text for HTML element content and double-quoted attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A whole page: `main` is trusted markup; `data` values are escaped into attributes.
pub fn render(tenant: &TenantRuntime, title: &str, page: &str, data: &[(&str, &str)], main: &str) -> String {
    let prefix = escape(&tenant.path_prefix);
    let attrs: String = data.iter().map(|(k, v)| format!(" data-{k}=\"{}\"", escape(v))).collect();
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · {tenant_name}</title>\n<link rel=\"stylesheet\" href=\"{prefix}/assets/latchkey.css\">\n\
         <script src=\"{prefix}/assets/latchkey.js\" defer></script>\n</head>\n\
         <body>\n<main id=\"app\" data-page=\"{page}\" data-base=\"{prefix}\"{attrs}>\n\
         <p class=\"tenant\">{tenant_name}</p>\n{main}\n\
         <p id=\"status\" class=\"status\" role=\"status\" aria-live=\"polite\"></p>\n\
         <noscript><p class=\"status error\">This page needs JavaScript to talk to your passkey.</p></noscript>\n\
         </main>\n</body>\n</html>\n",
        title = escape(title),
        tenant_name = escape(&tenant.name),
    )
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
    fn escapes_markup() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn only_known_assets() {
        assert_eq!(Asset::from_file_name("latchkey.js"), Some(Asset::Script));
        assert_eq!(Asset::from_file_name("../latchkey.js"), None);
    }
}
