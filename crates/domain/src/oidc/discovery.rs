//! The OpenID Provider metadata document of a tenant. Every URL in it is built from the tenant's
//! configured base URL, never from the request.

use serde::Serialize;

/// The device authorization grant's `grant_type` (RFC 8628 §3.4).
pub const DEVICE_GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:device_code";

#[derive(Serialize)]
pub struct ProviderMetadata<'a> {
    pub issuer: &'a str,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub userinfo_endpoint: String,
    pub jwks_uri: String,
    pub end_session_endpoint: String,
    pub revocation_endpoint: String,
    pub introspection_endpoint: String,
    pub device_authorization_endpoint: String,
    /// RFC 9126; no app is required to push at server level (`--require-par` is per app).
    pub pushed_authorization_request_endpoint: String,
    pub require_pushed_authorization_requests: bool,
    pub scopes_supported: &'static [&'static str],
    pub response_types_supported: &'static [&'static str],
    pub response_modes_supported: &'static [&'static str],
    pub grant_types_supported: &'static [&'static str],
    pub subject_types_supported: &'static [&'static str],
    pub id_token_signing_alg_values_supported: &'static [&'static str],
    pub token_endpoint_auth_methods_supported: &'static [&'static str],
    /// The algorithms of `private_key_jwt` assertions.
    pub token_endpoint_auth_signing_alg_values_supported: &'static [&'static str],
    /// DPoP proofs' algorithms (RFC 9449 §5.1).
    pub dpop_signing_alg_values_supported: &'static [&'static str],
    pub revocation_endpoint_auth_methods_supported: &'static [&'static str],
    pub introspection_endpoint_auth_methods_supported: &'static [&'static str],
    pub code_challenge_methods_supported: &'static [&'static str],
    pub claims_supported: &'static [&'static str],
    pub prompt_values_supported: &'static [&'static str],
    pub acr_values_supported: &'static [&'static str],
    pub claims_parameter_supported: bool,
    pub request_parameter_supported: bool,
    pub request_uri_parameter_supported: bool,
    pub authorization_response_iss_parameter_supported: bool,
    pub backchannel_logout_supported: bool,
    pub backchannel_logout_session_supported: bool,
}

pub const SCOPES: &[&str] = &["openid", "profile", "email", "offline_access"];
pub const CLIENT_AUTH: &[&str] = &["client_secret_basic", "client_secret_post", "private_key_jwt", "none"];

pub fn metadata(issuer: &str) -> ProviderMetadata<'_> {
    ProviderMetadata {
        issuer,
        authorization_endpoint: format!("{issuer}/authorize"),
        token_endpoint: format!("{issuer}/token"),
        userinfo_endpoint: format!("{issuer}/userinfo"),
        jwks_uri: format!("{issuer}/.well-known/jwks.json"),
        end_session_endpoint: format!("{issuer}/logout"),
        revocation_endpoint: format!("{issuer}/revoke"),
        introspection_endpoint: format!("{issuer}/introspect"),
        device_authorization_endpoint: format!("{issuer}/device_authorization"),
        pushed_authorization_request_endpoint: format!("{issuer}/par"),
        require_pushed_authorization_requests: false,
        scopes_supported: SCOPES,
        response_types_supported: &["code"],
        response_modes_supported: &["query"],
        grant_types_supported: &["authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT_TYPE],
        subject_types_supported: &["public"],
        id_token_signing_alg_values_supported: &["RS256", "ES256", "EdDSA"],
        token_endpoint_auth_methods_supported: CLIENT_AUTH,
        token_endpoint_auth_signing_alg_values_supported: crate::oidc::client_assertion::ASSERTION_ALGS,
        dpop_signing_alg_values_supported: crate::oidc::client_assertion::ASSERTION_ALGS,
        revocation_endpoint_auth_methods_supported: CLIENT_AUTH,
        introspection_endpoint_auth_methods_supported: &[
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
        ],
        code_challenge_methods_supported: &["S256"],
        claims_supported: &[
            "iss",
            "sub",
            "aud",
            "exp",
            "iat",
            "auth_time",
            "nonce",
            "amr",
            "acr",
            "sid",
            "at_hash",
            "name",
            "picture",
            "email",
            "email_verified",
            "roles",
        ],
        prompt_values_supported: &["none", "login", "consent", "select_account"],
        acr_values_supported: &["phr", "phrh"],
        claims_parameter_supported: true,
        request_parameter_supported: false,
        request_uri_parameter_supported: false,
        authorization_response_iss_parameter_supported: true,
        backchannel_logout_supported: true,
        backchannel_logout_session_supported: true,
    }
}
