//! Reading requests, with one set of rules for every handler: headers, the session cookie, the
//! Bearer token, the caller's address and the query string. Bodies are read in [`super::body`].

use std::net::{IpAddr, SocketAddr};

use hyper::Request;
use hyper::header::{self, HeaderMap, HeaderName};

use latchkey_domain::netrange::{IpRange, any_contains};
use latchkey_domain::params::Params;
use latchkey_domain::registry::TenantRuntime;
use latchkey_domain::sessions::{COOKIE_NAME, cookie_name};

/// A header's value, when present and visible ASCII.
pub fn header(headers: &HeaderMap, name: HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The token of an `Authorization: Bearer` header (the scheme is case-insensitive).
pub fn bearer(headers: &HeaderMap) -> Option<String> {
    let (scheme, token) = header(headers, header::AUTHORIZATION)?.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_owned())
}

/// The `Origin` the browser sent, if any.
pub fn origin(headers: &HeaderMap) -> Option<String> {
    header(headers, header::ORIGIN).map(str::to_owned)
}

/// The value of the cookie `name` from the request's `Cookie` headers, if any and not empty.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, value)| *n == name && !value.is_empty())
        .map(|(_, value)| value.to_owned())
}

/// The session token from the request's `Cookie` headers, under the tenant's name for it (see
/// [`cookie_name`]), if any.
pub fn session_token(headers: &HeaderMap, tenant: &TenantRuntime) -> Option<String> {
    cookie(headers, &cookie_name(tenant, COOKIE_NAME))
}

/// The client's address: the peer, or, when the peer is a trusted proxy, the address its
/// proxies recorded in `X-Forwarded-For`. The list is read from the right (each proxy appends the
/// address it received the request from) for as long as the entries are trusted proxies: the
/// first that is not is the client. An entry that cannot be read stops the walk at the proxy
/// that wrote it, since what lies to its left (the client's own header, at worst) is no more
/// trustworthy than the garbage: without that stop, a proxy that adds a port (`ip:port`) would
/// let the client's own entries through.
pub fn client_ip(peer: SocketAddr, headers: &HeaderMap, trusted: &[IpRange]) -> IpAddr {
    let mut client = peer.ip().to_canonical();
    if !any_contains(trusted, client) {
        return client;
    }
    let mut entries: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .map(|v| v.to_str().unwrap_or(""))
        .flat_map(|v| v.split(','))
        .collect();
    while let Some(entry) = entries.pop() {
        let Some(ip) = forwarded_address(entry) else { break };
        client = ip;
        if !any_contains(trusted, ip) {
            break;
        }
    }
    client
}

/// One `X-Forwarded-For` entry: an address, `ip:port` or `[v6]:port` (as some proxies write
/// them), IPv4-mapped IPv6 read as IPv4.
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    let ip = entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| entry.strip_prefix('[').and_then(|e| e.strip_suffix(']')).and_then(|e| e.parse().ok()))?;
    Some(ip.to_canonical())
}

/// The host the request was sent to: the `Host` header, or the authority of an absolute URI.
pub fn host<B>(req: &Request<B>) -> Option<String> {
    header(req.headers(), header::HOST).map(str::to_owned).or_else(|| req.uri().authority().map(|a| a.to_string()))
}

/// The query string's parameters.
pub fn query<B>(req: &Request<B>) -> Params {
    Params::parse(req.uri().query().unwrap_or("").as_bytes())
}

/// Whether the body is declared as `expected` (parameters such as `charset` aside).
pub fn content_type_is(headers: &HeaderMap, expected: &str) -> bool {
    header(headers, header::CONTENT_TYPE)
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(expected))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn finds_a_cookie() {
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, HeaderValue::from_static("a=1; latchkey_session=abc; b=2"));
        assert_eq!(cookie(&h, "latchkey_session").as_deref(), Some("abc"));
        assert_eq!(cookie(&h, "__Host-latchkey_session"), None);
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, HeaderValue::from_static("latchkey_session="));
        assert_eq!(cookie(&h, "latchkey_session"), None);
    }

    #[test]
    fn bearer_tokens() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer  abc "));
        assert_eq!(bearer(&h).as_deref(), Some("abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert_eq!(bearer(&h), None);
    }

    #[test]
    fn forwarded_for_only_from_trusted_proxies() {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_static("203.0.113.9, 10.0.0.5"));
        let proxy: SocketAddr = "10.0.0.5:443".parse().unwrap();
        let trusted: Vec<IpRange> = vec!["10.0.0.0/24".parse().unwrap()];
        assert_eq!(client_ip(proxy, &h, &trusted), "203.0.113.9".parse::<IpAddr>().unwrap());
        let stranger: SocketAddr = "198.51.100.1:1".parse().unwrap();
        assert_eq!(client_ip(stranger, &h, &trusted), stranger.ip(), "a stranger cannot spoof its address");
    }

    #[test]
    fn forwarded_for_is_walked_from_the_right() {
        let proxy: SocketAddr = "10.0.0.5:443".parse().unwrap();
        let trusted: Vec<IpRange> = vec!["10.0.0.0/24".parse().unwrap(), "fd00::/8".parse().unwrap()];
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let seen = |values: &[&'static str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append("x-forwarded-for", HeaderValue::from_static(v));
            }
            client_ip(proxy, &h, &trusted)
        };
        // The client's own entry on the left is not believed: the walk stops at the first
        // address that is not a proxy.
        assert_eq!(seen(&["6.6.6.6, 203.0.113.9, 10.0.0.7"]), ip("203.0.113.9"));
        // Several headers read as one list, in order.
        assert_eq!(seen(&["6.6.6.6", "203.0.113.9", "10.0.0.7"]), ip("203.0.113.9"));
        // Ports, as some proxies write them.
        assert_eq!(seen(&["6.6.6.6, 203.0.113.9:51234"]), ip("203.0.113.9"));
        assert_eq!(seen(&["6.6.6.6, [2001:db8::1]:443, [fd00::2]"]), ip("2001:db8::1"));
        assert_eq!(seen(&["::ffff:203.0.113.9"]), ip("203.0.113.9"));
        // Garbage stops the walk at the proxy that wrote it, never skipped to the client's entry.
        assert_eq!(seen(&["6.6.6.6, unknown, 10.0.0.7"]), ip("10.0.0.7"));
        assert_eq!(seen(&["6.6.6.6, 203.0.113.9 x"]), ip("10.0.0.5"));
        // Only proxies: the leftmost of them.
        assert_eq!(seen(&["10.0.0.9, 10.0.0.7"]), ip("10.0.0.9"));
        assert_eq!(seen(&[]), ip("10.0.0.5"));
    }
}
