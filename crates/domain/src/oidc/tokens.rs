//! Minting and checking tokens: ID tokens and access tokens (JWT, RS256, `kid`), signed with the
//! tenant's cached key; access tokens checked against the tenant's own published keys only.

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::{Deserialize, Serialize};

use super::error::OAuthError;
use super::{jwt, signer};
use crate::clock::Timestamp;
use crate::crypto::{b64url, random_bytes};
use crate::registry::TenantRuntime;
use crate::store::SigningAlg;
use crate::store::users::UserRow;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AccessClaims {
    pub iss: String,
    pub sub: String,
    pub aud: String,
    pub client_id: String,
    pub scope: String,
    pub exp: Timestamp,
    pub iat: Timestamp,
    pub jti: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_time: Option<Timestamp>,
    /// Always present (an empty array for a user without roles and for client tokens): a
    /// resource server reads the claim without first asking whether it is there.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Claims the authorization request's `claims` parameter asked for at userinfo, beyond the
    /// scopes: what `/userinfo` then answers with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub userinfo_claims: Vec<String>,
    /// The DPoP key the token is bound to (RFC 9449 §6.1): presented only with its proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
}

/// A token's confirmation claim (RFC 7800): the thumbprint of the key that must prove it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Confirmation {
    pub jkt: String,
}

impl AccessClaims {
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scope.split(' ').any(|s| s == scope)
    }
    /// Tokens of the client-credentials grant have the client as subject: there is no user.
    pub fn is_client_token(&self) -> bool {
        self.sub == self.client_id && self.auth_time.is_none()
    }
}

#[derive(Debug, Serialize)]
pub struct IdClaims {
    pub iss: String,
    pub sub: String,
    pub aud: String,
    pub exp: Timestamp,
    pub iat: Timestamp,
    pub auth_time: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    pub amr: Vec<String>,
    /// OpenID EAP ACR Values: `phrh` after a device-bound passkey (`amr` `hwk`), `phr` after a
    /// synced one (`swk`); none after a social sign-in, which is not phishing-resistant here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acr: Option<&'static str>,
    /// The browser session the sign-in made (or, for a device, the one that approved it), named
    /// by `SessionIds`, as a logout will name it; absent from grants stored without a session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    #[serde(flatten)]
    pub user: UserClaims,
}

/// The `acr` an `amr` earns ([`IdClaims::acr`]).
pub fn acr_of(amr: &[String]) -> Option<&'static str> {
    if amr.iter().any(|m| m == "hwk") {
        Some("phrh")
    } else if amr.iter().any(|m| m == "swk") {
        Some("phr")
    } else {
        None
    }
}

/// An ID token's claims with `at_hash`, known only once the access token it goes with is signed.
#[derive(Serialize)]
struct WithAtHash<'a> {
    #[serde(flatten)]
    claims: &'a IdClaims,
    at_hash: String,
}

/// `at_hash` (OpenID Connect Core §3.1.3.6): the left half of the access token's hash, base64url,
/// with the hash of the ID token's algorithm: SHA-256 for RS256 and ES256, SHA-512 for EdDSA
/// with Ed25519 (as relying parties such as openid-client compute it).
pub fn at_hash(alg: SigningAlg, access_token: &str) -> String {
    let (hash, half) = match alg {
        SigningAlg::RS256 | SigningAlg::ES256 => (&aws_lc_rs::digest::SHA256, 16),
        SigningAlg::EdDSA => (&aws_lc_rs::digest::SHA512, 32),
    };
    let digest = aws_lc_rs::digest::digest(hash, access_token.as_bytes());
    b64url(&digest.as_ref()[..half])
}

/// The claims about a user that the granted scopes allow (ID token and userinfo).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct UserClaims {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picture: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email_verified: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<String>>,
}

pub fn scopes(scope: &str) -> impl Iterator<Item = &str> {
    scope.split(' ').filter(|s| !s.is_empty())
}

/// A generated avatar for users without a picture: the tenant serves it (initials on a colour).
pub fn picture_url(tenant: &TenantRuntime, user: &UserRow) -> String {
    user.picture.clone().unwrap_or_else(|| format!("{}/avatars/{}.svg", tenant.base_url, user.public_id))
}

pub fn user_claims(
    tenant: &TenantRuntime,
    user: &UserRow,
    email_verified: bool,
    roles: &[String],
    scope: &str,
    asked: &[String],
) -> UserClaims {
    // A claim comes with its scope, or alone when the `claims` parameter asked for it.
    let has =
        |scope_name: &str, claim: &str| scopes(scope).any(|x| x == scope_name) || asked.iter().any(|a| a == claim);
    UserClaims {
        name: has("profile", "name").then(|| user.name.clone()),
        picture: has("profile", "picture").then(|| picture_url(tenant, user)),
        email: has("email", "email").then(|| user.email.clone()),
        email_verified: has("email", "email_verified").then_some(email_verified),
        roles: (!roles.is_empty()).then(|| roles.to_vec()),
    }
}

pub fn new_jti() -> Result<String, OAuthError> {
    Ok(b64url(&random_bytes::<16>()?))
}

/// An access token and, when asked, an ID token carrying the access token's `at_hash`: so the
/// access token is signed first, then the ID token. Each signature may be paired with another
/// request's when one comes at the same moment ([`signer`]).
pub async fn sign_tokens(
    tenant: &TenantRuntime,
    alg: SigningAlg,
    access: &AccessClaims,
    id: Option<&IdClaims>,
) -> Result<(String, Option<String>), OAuthError> {
    let hot = tenant.hot_shared().map_err(OAuthError::server_error)?;
    let key = hot.signing_key(alg).map_err(OAuthError::server_error)?;
    let access = signer::sign_one(&hot, key, jwt::signing_input(key, "at+jwt", access)?).await?;
    let Some(claims) = id else { return Ok((access, None)) };
    let with_hash = WithAtHash { claims, at_hash: at_hash(alg, &access) };
    let id = signer::sign_one(&hot, key, jwt::signing_input(key, "JWT", &with_hash)?).await?;
    Ok((access, Some(id)))
}

/// Why a token was refused: a sentence for the caller, and the library's own words for the log.
#[derive(Debug)]
pub struct Refused {
    pub reason: &'static str,
    pub cause: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.cause)
    }
}

impl From<Refused> for OAuthError {
    fn from(r: Refused) -> OAuthError {
        let mut e = OAuthError::invalid_token(r.reason);
        e.cause = Some(r.cause);
        e
    }
}

fn refused(reason: &'static str, cause: impl std::fmt::Display) -> Refused {
    Refused { reason, cause: cause.to_string() }
}

/// Checks a token's signature with the one of this tenant's published keys its `kid` names, with
/// that key's own algorithm only (never `none`, an HMAC or another key's), and its issuer. Expiry
/// is checked by the caller against the daemon's clock.
fn verify<T: serde::de::DeserializeOwned>(
    tenant: &TenantRuntime,
    token: &str,
    typ: Option<&str>,
) -> Result<T, Refused> {
    let header = jsonwebtoken::decode_header(token).map_err(|e| refused("the token is not a JSON Web Token", e))?;
    if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256 | Algorithm::EdDSA) {
        return Err(refused(
            "the token is not signed with RS256, ES256 or EdDSA, the algorithms this service signs with",
            format!("{:?}", header.alg),
        ));
    }
    if let Some(want) = typ
        && header.typ.as_deref() != Some(want)
    {
        let what = if want == "JWT" { "the token is not an ID token" } else { "the token is not an access token" };
        return Err(refused(what, format!("typ {:?}", header.typ)));
    }
    let kid = header.kid.ok_or_else(|| refused("the token is not signed by this service", "no kid"))?;
    let hot = tenant.hot().map_err(|e| refused("the token cannot be checked now", e.to_string()))?;
    let (key_alg, key): &(Algorithm, DecodingKey) = hot
        .decoding
        .get(&kid)
        .ok_or_else(|| refused("the token is not signed by this service", format!("kid {kid:?}")))?;
    if header.alg != *key_alg {
        return Err(refused(
            "the token's algorithm is not the one of the key it names",
            format!("alg {:?} for a {key_alg:?} key", header.alg),
        ));
    }
    let mut v = Validation::new(*key_alg);
    // A moved tenant's tokens issued before the move name its old URL while that still answers.
    let mut issuers = vec![tenant.base_url.as_str()];
    issuers.extend(tenant.old_urls.iter().map(|o| o.base_url.as_str()));
    v.set_issuer(&issuers);
    v.validate_aud = false;
    v.validate_exp = false;
    v.set_required_spec_claims(&["iss", "sub"]);
    jsonwebtoken::decode::<T>(token, key, &v)
        .map(|d| d.claims)
        .map_err(|e| refused("the token's signature, issuer or claims do not check out", e))
}

/// An access token of this tenant that has not expired (revocation and user state are checked
/// by the caller, which has the database).
pub fn verify_access(tenant: &TenantRuntime, token: &str, now: Timestamp) -> Result<AccessClaims, OAuthError> {
    let claims: AccessClaims = verify(tenant, token, Some("at+jwt"))?;
    if claims.exp <= now {
        return Err(OAuthError::invalid_token("the access token has expired"));
    }
    Ok(claims)
}

#[derive(Debug, Deserialize)]
pub struct IdTokenHint {
    pub sub: String,
    pub aud: String,
    pub exp: Timestamp,
    #[serde(default)]
    pub iat: Option<Timestamp>,
}

/// An `id_token_hint` accepted as every token is: an ID token (`typ: JWT`, not an access token)
/// of this tenant, signed, and issued to `client_id` when the request names one (OIDC
/// RP-Initiated Logout §2). Whose it is, the caller compares with the session.
///
/// An expired one is accepted while it is younger than `max_age` (the session lifetime): a logout
/// is what an application sends an hour after its user signed in, with the ID token it got then,
/// and RP-Initiated Logout §2 lets an OP accept it. What it may do is bounded anyway: it names a
/// user and an application, and only ends the session when that user is the one signed in.
pub fn verify_id_hint(
    tenant: &TenantRuntime,
    token: &str,
    now: Timestamp,
    client_id: Option<&str>,
    max_age: i64,
) -> Result<IdTokenHint, Refused> {
    let hint: IdTokenHint = verify(tenant, token, Some("JWT"))?;
    let young = hint.iat.is_some_and(|iat| iat <= now && now - iat < max_age);
    if hint.exp <= now && !young {
        return Err(refused("the ID token has expired", format!("exp {}, iat {:?}", hint.exp, hint.iat)));
    }
    if let Some(client) = client_id
        && client != hint.aud
    {
        return Err(refused("the ID token was issued to another client", format!("aud {:?}", hint.aud)));
    }
    Ok(hint)
}
