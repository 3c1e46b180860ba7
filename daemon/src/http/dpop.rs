//! DPoP (RFC 9449) at the HTTP boundary: the `DPoP` header read once and its proof checked for
//! the request's method and URL, the `Authorization: DPoP` scheme of resources, and the
//! `DPoP-Nonce` header on every answer to a request that sent a proof.

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Response};

use super::body::Req;
use super::{Body, Cx};
use latchkey_domain::clock::Timestamp;
use latchkey_domain::oidc::dpop::{self, Proof, Target};
use latchkey_domain::oidc::error::OAuthError;
use latchkey_domain::oidc::introspection::Presented;
use latchkey_store::WriteCost;

pub const DPOP: HeaderName = HeaderName::from_static("dpop");
pub const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// Whether the request sent a `DPoP` header (its answer then carries a nonce).
pub fn sent(headers: &HeaderMap) -> bool {
    headers.contains_key(DPOP)
}

/// The request's one `DPoP` header, if any (two are refused).
pub fn header(headers: &HeaderMap) -> Result<Option<String>, OAuthError> {
    Ok(dpop::one_header(headers.get_all(DPOP).iter().map(HeaderValue::as_bytes))?.map(str::to_owned))
}

/// A proof checked for the request's method and URL (the tenant's origin and the request's
/// path), with `ath` for `access_token` when a resource received one; not spent yet.
pub fn check(
    cx: &Cx<'_>,
    proof: &str,
    method: &Method,
    path: &str,
    access_token: Option<&str>,
    nonce_required: bool,
) -> Result<Proof, OAuthError> {
    let url = format!("{}{path}", cx.tenant.origin);
    let now = cx.now();
    // On SQLite most accepted proofs are remembered in memory only (`dpop::spend`): those dated
    // up to this daemon's start are not accepted.
    let issued_after = match cx.state.db.write_cost() {
        WriteCost::RoundTrips => Timestamp::MIN,
        _ => cx.state.dpop_spent.issued_after(),
    };
    let target = Target { method: method.as_str(), url: &url, access_token, nonce_required, issued_after };
    dpop::check(&cx.state.kek, cx.tenant.id, proof, &target, now)
}

/// The access token a resource received in its `Authorization` header: `Bearer`, or `DPoP`
/// with a proof that fits this request (RFC 9449 §7.1); `None` without that header.
pub fn access_token(cx: &Cx<'_>, req: &Req) -> Result<Option<Presented>, OAuthError> {
    let Some(value) = super::request::header(req.headers(), header::AUTHORIZATION) else { return Ok(None) };
    let Some((scheme, token)) = value.split_once(' ').map(|(s, t)| (s, t.trim())) else { return Ok(None) };
    if token.is_empty() {
        return Ok(None);
    }
    if scheme.eq_ignore_ascii_case("bearer") {
        return Ok(Some(Presented { token: token.to_owned(), proof: None }));
    }
    if !scheme.eq_ignore_ascii_case("dpop") {
        return Ok(None);
    }
    let proof = header(req.headers())
        .and_then(|p| p.ok_or_else(|| dpop::invalid("a DPoP token needs a DPoP proof header")))
        .and_then(|p| check(cx, &p, req.method(), req.uri().path(), Some(token), false))
        .map_err(OAuthError::at_resource)?;
    Ok(Some(Presented { token: token.to_owned(), proof: Some(proof) }))
}

/// Records a checked proof as used ([`dpop::spend`]).
pub async fn spend(cx: &Cx<'_>, proof: &Proof) -> Result<(), OAuthError> {
    dpop::spend(cx.state, cx.tenant.id, proof).await
}

/// Adds the tenant's current nonce to the answer of a request that sent a proof.
pub fn with_nonce(cx: &Cx<'_>, sent: bool, mut r: Response<Body>) -> Response<Body> {
    if sent && let Ok(v) = HeaderValue::from_str(&dpop::nonce(&cx.state.kek, cx.tenant.id, cx.now())) {
        r.headers_mut().insert(DPOP_NONCE, v);
    }
    r
}
