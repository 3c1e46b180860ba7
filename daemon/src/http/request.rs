//! Reading requests, with one set of rules for every handler: headers, the session cookie, the
//! Bearer token, the caller's address and the query string. Bodies are read in [`super::body`].

use std::net::{IpAddr, SocketAddr};

use hyper::Request;
use hyper::header::{self, HeaderMap, HeaderName};

use crate::netrange::{IpRange, any_contains};
use crate::params::Params;
use crate::sessions::COOKIE_NAME;

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

/// The session token from the request's `Cookie` headers, if any.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == COOKIE_NAME && !value.is_empty())
        .map(|(_, value)| value.to_owned())
}

/// The client's address: the peer, or, when the peer is a trusted proxy, the last address in
/// `X-Forwarded-For` that is not itself a trusted proxy.
pub fn client_ip(peer: SocketAddr, headers: &HeaderMap, trusted: &[IpRange]) -> IpAddr {
    let peer_ip = peer.ip();
    if !any_contains(trusted, peer_ip) {
        return peer_ip;
    }
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|s| s.trim().parse::<IpAddr>().ok())
        .collect::<Vec<_>>();
    forwarded.into_iter().rev().find(|ip| !any_contains(trusted, *ip)).unwrap_or(peer_ip)
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
    fn finds_the_session_cookie() {
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, HeaderValue::from_static("a=1; latchkey_session=abc; b=2"));
        assert_eq!(session_token(&h).as_deref(), Some("abc"));
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, HeaderValue::from_static("latchkey_session="));
        assert_eq!(session_token(&h), None);
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
}
