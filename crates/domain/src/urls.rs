//! Validation of the URLs operators configure: tenant base URLs, redirect URIs, CORS origins.
//! Each function returns the normalised value or a sentence saying what is wrong.

use url::{Host, Url};

/// `localhost`, `127.0.0.1` or `[::1]`: the hosts on which plain http is tolerated (those three,
/// as documented; not the rest of 127.0.0.0/8).
pub fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `host[:port]` as a client sends it in `Host`, lowercase, default ports left out.
pub fn authority(url: &Url) -> String {
    let host = match url.host() {
        Some(Host::Ipv6(ip)) => format!("[{ip}]"),
        Some(h) => h.to_string().to_ascii_lowercase(),
        None => String::new(),
    };
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host,
    }
}

/// A tenant base URL: https (or http on loopback), no query, fragment or credentials; returned
/// without a trailing slash, because it is the issuer and must compare equal character for
/// character.
pub fn base_url(text: &str) -> Result<Url, String> {
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not an absolute URL ({e})"))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{text:?}: a base URL has no query or fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{text:?}: a base URL has no user name or password"));
    }
    if url.host().is_none() {
        return Err(format!("{text:?}: a base URL needs a host"));
    }
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_host(&url) => {}
        "http" => {
            return Err(format!("{text:?}: plain http is allowed only for localhost, 127.0.0.1 and [::1]; use https"));
        }
        s => return Err(format!("{text:?}: scheme {s:?} is not allowed; use https")),
    }
    let trimmed = url.as_str().trim_end_matches('/');
    Url::parse(trimmed).map_err(|e| e.to_string())
}

/// A Login Redirect URL or post-logout URL. Stored exactly as given: matching at `/authorize`
/// is character for character, so nothing is normalised here, only refused.
pub fn redirect_uri(text: &str) -> Result<String, String> {
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{text:?}: a redirect URI has no spaces or control characters"));
    }
    if text.contains('*') {
        return Err(format!("{text:?}: wildcards are not allowed; register each redirect URI exactly"));
    }
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not an absolute URL ({e})"))?;
    if url.fragment().is_some() || text.contains('#') {
        return Err(format!("{text:?}: a redirect URI must not have a fragment (RFC 6749 §3.1.2)"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("{text:?}: a redirect URI must not carry a user name or password"));
    }
    match url.scheme() {
        "https" if url.host().is_some() => Ok(text.to_owned()),
        "http" if is_loopback_host(&url) => Ok(text.to_owned()),
        "http" => Err(format!("{text:?}: plain http is allowed only on localhost, 127.0.0.1 and [::1]; use https")),
        "javascript" | "data" | "file" | "vbscript" | "blob" => {
            Err(format!("{text:?}: the {} scheme is never a redirect target", url.scheme()))
        }
        // Private-use schemes of native apps (RFC 8252 §7.1), e.g. com.example.app:/callback.
        s if s.contains('.') => Ok(text.to_owned()),
        s => Err(format!(
            "{text:?}: scheme {s:?} is not allowed; use https, http on loopback, or a reverse-domain scheme for native apps"
        )),
    }
}

/// A CORS origin: `scheme://host[:port]`, nothing more; returned in its serialised form.
pub fn origin(text: &str) -> Result<String, String> {
    if text == "*" || text.contains('*') {
        return Err(format!("{text:?}: wildcard origins are not allowed; list each origin"));
    }
    let url = Url::parse(text).map_err(|e| format!("{text:?} is not an origin like https://app.example.com ({e})"))?;
    let origin = url.origin().ascii_serialization();
    if origin == "null"
        || (url.path() != "/" && !url.path().is_empty())
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(format!("{text:?} is not an origin: write scheme://host[:port] only"));
    }
    if text.trim_end_matches('/') != origin {
        return Err(format!("{text:?}: write the origin as {origin}"));
    }
    match url.scheme() {
        "https" => Ok(origin),
        "http" if is_loopback_host(&url) => Ok(origin),
        _ => Err(format!("{text:?}: origins must be https (or http on localhost)")),
    }
}

/// Slugs that would shadow the daemon's own top-level routes, or read as them.
const RESERVED_SLUGS: &[&str] = &[
    "healthz",
    "readyz",
    "metrics",
    "admin",
    "api",
    "static",
    "assets",
    "well-known",
    "favicon-ico",
    "robots-txt",
    "login",
    "logout",
    "authorize",
    "token",
    "userinfo",
];

#[derive(Debug, PartialEq, Eq)]
pub enum SlugError {
    Invalid(String),
    Reserved(String),
}

/// `[a-z0-9][a-z0-9-]{0,62}`, and not one of the reserved top-level names.
pub fn slug(text: &str) -> Result<(), SlugError> {
    let ok_first = text.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let ok_rest = text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok_first || !ok_rest || text.len() > 63 {
        return Err(SlugError::Invalid(format!(
            "{text:?} is not a valid slug: use 1-63 characters a-z, 0-9 and '-', starting with a letter or digit"
        )));
    }
    if RESERVED_SLUGS.contains(&text) {
        return Err(SlugError::Reserved(format!(
            "{text:?} is reserved for the daemon's own routes; pick another slug"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris() {
        for good in [
            "https://app.example.com/oidc-callback",
            "http://localhost:3000/oidc-callback",
            "http://127.0.0.1/cb",
            "http://[::1]:8000/cb",
            "com.example.app:/oauth2redirect",
            "https://app.example.com/cb?tenant=a",
        ] {
            assert_eq!(redirect_uri(good).as_deref(), Ok(good), "{good}");
        }
        for bad in [
            "http://app.example.com/cb",
            "https://app.example.com/cb#frag",
            "https://*.example.com/cb",
            "javascript:alert(1)",
            "data:text/html,hi",
            "/relative",
            "https://user:pw@app.example.com/cb",
            "https://app.example.com/c b",
            "ftp://app.example.com/cb",
        ] {
            assert!(redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn origins() {
        assert_eq!(origin("https://app.example.com").as_deref(), Ok("https://app.example.com"));
        assert_eq!(origin("http://localhost:3000").as_deref(), Ok("http://localhost:3000"));
        assert!(origin("https://app.example.com/path").is_err());
        assert!(origin("*").is_err());
        assert!(origin("http://app.example.com").is_err());
        assert!(origin("https://APP.example.com").is_err());
    }

    #[test]
    fn base_urls() {
        assert_eq!(base_url("http://localhost:8080/acme/").unwrap().as_str(), "http://localhost:8080/acme");
        assert_eq!(base_url("https://login.acme.com").unwrap().as_str(), "https://login.acme.com/");
        assert!(base_url("http://acme.com/x").is_err());
        assert!(base_url("https://acme.com/x?y=1").is_err());
        assert!(base_url("acme").is_err());
    }

    #[test]
    fn slugs() {
        assert!(slug("acme").is_ok());
        assert!(slug("a-1").is_ok());
        assert!(matches!(slug("Acme"), Err(SlugError::Invalid(_))));
        assert!(matches!(slug("-a"), Err(SlugError::Invalid(_))));
        assert!(matches!(slug(""), Err(SlugError::Invalid(_))));
        assert!(matches!(slug(&"a".repeat(64)), Err(SlugError::Invalid(_))));
        assert!(matches!(slug("healthz"), Err(SlugError::Reserved(_))));
    }

    #[test]
    fn authorities() {
        assert_eq!(authority(&Url::parse("http://LOCALHOST:8080/x").unwrap()), "localhost:8080");
        assert_eq!(authority(&Url::parse("https://a.example:443/").unwrap()), "a.example");
        assert_eq!(authority(&Url::parse("http://[::1]:9/").unwrap()), "[::1]:9");
    }
}
