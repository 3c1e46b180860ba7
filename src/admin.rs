//! Admin-socket protocol: HTTP/1.1 with JSON bodies under [`PREFIX`].
//!
//! | call | request | response |
//! |---|---|---|
//! | `GET  /admin/v1/status` | – | [`Status`] |
//! | `POST /admin/v1/tenants` | [`CreateTenant`] | 201 [`Tenant`] |
//! | `GET  /admin/v1/tenants` | – | `[Tenant]` |
//! | `GET  /admin/v1/tenants/{slug}` | – | [`Tenant`] |
//! | `DELETE /admin/v1/tenants/{slug}` | [`Confirm`] | 204 |
//! | `POST /admin/v1/tenants/{slug}/apps` | [`CreateApp`] | 201 [`AppCreated`] |
//! | `GET  /admin/v1/tenants/{slug}/apps` | – | `[App]` |
//! | `GET  /admin/v1/tenants/{slug}/apps/{client_id}` | – | [`App`] |
//! | `DELETE /admin/v1/tenants/{slug}/apps/{client_id}` | [`Confirm`] | 204 |
//! | `PATCH /admin/v1/tenants/{slug}/apps/{client_id}` | [`UpdateApp`] | [`App`] |
//! | `POST /admin/v1/tenants/{slug}/apps/{client_id}/rotate-secret` | – | [`SecretRotated`] |
//! | `GET  /admin/v1/tenants/{slug}/keys` | – | `[Key]` |
//! | `POST /admin/v1/tenants/{slug}/keys/rotate` | [`RotateKey`] (`{}`: RS256) | 201 [`Key`] |
//! | `POST /admin/v1/tenants/{slug}/keys/{kid}/retire` | [`Confirm`] | `[Key]` (what is left) |
//!
//! Every error is an [`ErrorBody`]: `{"error": <a stable code from [`crate::codes`]>,
//! "error_description": <a sentence>}`, as on every JSON endpoint of the daemon.

use serde::{Deserialize, Serialize};

/// Path prefix of every admin call.
pub const PREFIX: &str = "/admin/v1";

/// The body of every admin error response, the shape of every JSON error of the daemon.
/// (`code` and `message` are read too: what daemons before 2026-11-27 sent.)
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ErrorBody {
    #[serde(rename = "error", alias = "code")]
    pub code: String,
    #[serde(rename = "error_description", alias = "message")]
    pub message: String,
}

/// Daemon status, as `latchkey status` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    pub version: String,
    /// The commit the daemon was built from, or "unknown".
    #[serde(default)]
    pub commit: String,
    /// The schema version this release brings a database to.
    #[serde(default)]
    pub schema_version: u64,
    /// The schema version the database is at (higher than `schema_version` only when a newer
    /// release migrated it and says this one can still serve it).
    #[serde(default)]
    pub database_schema_version: u64,
    /// The oldest release that can serve the database's schema, as its release record says.
    #[serde(default)]
    pub database_serves_from: String,
    pub uptime_seconds: u64,
    pub listen: String,
    pub public_url: String,
    pub database: String,
    pub admin_socket: String,
    pub tenants: u64,
    /// What signs RS256 tokens: `aws-lc`, or `ifma-pairs` (the AVX-512 IFMA pair signer, asked
    /// for with `[signing] rsa_engine` on a CPU that has it). Absent from daemons that predate it.
    #[serde(default)]
    pub rsa_engine: String,
}

/// Which authenticators a tenant accepts at registration (`tenant update --attestation-policy`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum AttestationPolicy {
    /// Every authenticator, attested or not.
    #[default]
    Any,
    /// Only authenticators whose attestation chains to a root that the imported FIDO metadata
    /// lists for their AAGUID, with no revoked or compromised status (`latchkey mds import`).
    Verified,
}

impl AttestationPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            AttestationPolicy::Any => "any",
            AttestationPolicy::Verified => "verified",
        }
    }

    pub fn parse(s: &str) -> Option<AttestationPolicy> {
        match s {
            "any" => Some(AttestationPolicy::Any),
            "verified" => Some(AttestationPolicy::Verified),
            _ => None,
        }
    }
}

/// Who may register a passkey without an invitation.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Registration {
    /// Only invited users (or users recovering their account) may register.
    #[default]
    Invite,
    /// Anyone may register a free username.
    Open,
}

impl Registration {
    pub fn as_str(self) -> &'static str {
        match self {
            Registration::Invite => "invite",
            Registration::Open => "open",
        }
    }

    pub fn parse(s: &str) -> Option<Registration> {
        match s {
            "invite" => Some(Registration::Invite),
            "open" => Some(Registration::Open),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CreateTenant {
    pub slug: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rp_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Tenant {
    pub slug: String,
    pub name: String,
    pub base_url: String,
    /// Always equal to `base_url`; given separately because that is what client apps configure.
    pub issuer: String,
    pub rp_id: String,
    pub registration: Registration,
    pub created: String,
    /// URLs the tenant had, still answering (308 to `base_url`, the same JWKS) until `until`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub old_urls: Vec<OldUrl>,
    /// The brand of its pages (`tenant brand`): `null` where not set.
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub accent_color: Option<String>,
    #[serde(default)]
    pub default_locale: Option<String>,
    /// Hex SHA-256 of its logo (`tenant brand --logo`), `null` without one.
    #[serde(default)]
    pub logo_sha256: Option<String>,
    /// Which authenticators may register (`any` in daemons that predate the policy).
    #[serde(default)]
    pub attestation_policy: AttestationPolicy,
    /// With `verified`: the only AAGUIDs accepted (lower case); empty for any the metadata lists.
    #[serde(default)]
    pub allowed_aaguids: Vec<String>,
}

/// `PUT /admin/v1/tenants/{slug}/brand`: each part given replaces the current one; `none`
/// clears it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BrandTenant {
    /// The name the pages show instead of the tenant's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// `#rrggbb`: the accent of buttons and links, at least 4.5:1 against white.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// The pages' language when the browser asks for none Latchkey speaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_locale: Option<String>,
    /// The logo beside the name on every page: a PNG or a plain-drawing SVG (at most 256 KiB),
    /// base64; `none` removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
}

/// `POST /admin/v1/mds`: a FIDO Metadata Service BLOB (MDS3, a JWS) to verify and take as the
/// metadata every tenant's `verified` policy checks against.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ImportMds {
    /// The BLOB as downloaded (`blob.jwt`).
    pub blob: String,
    /// Roots to trust for the BLOB's signature instead of the FIDO Alliance's (GlobalSign Root
    /// CA - R3, built in): certificates in PEM, for a private metadata service.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<String>,
    /// Take a BLOB whose serial number is not above the one imported (a roll-back).
    #[serde(default)]
    pub force: bool,
}

/// The metadata in force (`GET /admin/v1/mds`, and the answer to an import).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct MdsStatus {
    /// The BLOB's serial number (`no`).
    pub serial: i64,
    /// When its publisher promises the next one (`nextUpdate`, YYYY-MM-DD).
    pub next_update: String,
    /// Hex SHA-256 of the BLOB as imported.
    pub sha256: String,
    /// When it was imported (RFC 3339).
    pub imported: String,
    /// Authenticators it lists by AAGUID.
    pub authenticators: u64,
    /// Of which refused whatever the policy: revoked, or with a compromised key.
    pub refused: u64,
}

/// A tenant's SCIM endpoint (`latchkey scim enable|rotate-token|disable|status`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ScimStatus {
    pub tenant: String,
    pub enabled: bool,
    /// `{base_url}/scim/v2`: the Tenant URL a directory is given.
    pub base_url: String,
    /// The bearer token, only in the answer that made it (enable, rotate-token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// A URL a tenant moved away from, answering until `until` (RFC 3339).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct OldUrl {
    pub base_url: String,
    pub until: String,
}

/// Body of `PATCH /admin/v1/tenants/{slug}`: what to change; absent fields stay. A new
/// `base_url` is an issuer change; an RP ID change needs `confirm` (passkeys registered under
/// the old one stop working).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct UpdateTenant {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rp_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attestation_policy: Option<AttestationPolicy>,
    /// Replaces the list of AAGUIDs accepted under `verified`; empty: any the metadata lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_aaguids: Option<Vec<String>>,
    /// How long the old URL keeps answering after a base URL change, in seconds (default 30 days;
    /// 0: not at all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_old_url_seconds: Option<u64>,
    #[serde(default)]
    pub confirm: bool,
}

impl UpdateTenant {
    pub fn is_empty(&self) -> bool {
        self.name.is_none()
            && self.base_url.is_none()
            && self.rp_id.is_none()
            && self.registration.is_none()
            && self.attestation_policy.is_none()
            && self.allowed_aaguids.is_none()
    }
}

/// How long an old base URL answers unless `keep_old_url_seconds` says otherwise: 30 days.
pub const KEEP_OLD_URL_SECONDS: u64 = 30 * 24 * 3600;

/// Body of a destructive call: the CLI sends `confirm: true` only with `--yes`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Confirm {
    #[serde(default)]
    pub confirm: bool,
}

/// Kinds of client application, as in Auth0's "Add Application".
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AppType {
    /// Server-side web application: confidential, has a secret.
    Web,
    /// Single-page application in a browser: public, PKCE required.
    Spa,
    /// Native or mobile application: public, PKCE required.
    Native,
    /// Machine to machine: confidential, client credentials grant only.
    M2m,
}

impl AppType {
    pub fn as_str(self) -> &'static str {
        match self {
            AppType::Web => "web",
            AppType::Spa => "spa",
            AppType::Native => "native",
            AppType::M2m => "m2m",
        }
    }

    /// Confidential clients authenticate with a secret; public ones cannot keep one.
    pub fn is_confidential(self) -> bool {
        matches!(self, AppType::Web | AppType::M2m)
    }

    pub fn parse(s: &str) -> Option<AppType> {
        match s {
            "web" => Some(AppType::Web),
            "spa" => Some(AppType::Spa),
            "native" => Some(AppType::Native),
            "m2m" => Some(AppType::M2m),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateApp {
    pub name: String,
    #[serde(rename = "type")]
    pub app_type: AppType,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub post_logout_redirect_uris: Vec<String>,
    #[serde(default)]
    pub cors_origins: Vec<String>,
    /// Extra scopes an m2m app may be granted (e.g. `users:invite`); OIDC scopes are implied.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// A `native` app that may use the device authorization grant (RFC 8628).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_flow: bool,
    /// The `acr` every sign-in to the app must reach: `phr` (a passkey) or `phrh` (a
    /// device-bound passkey or security key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_acr: Option<String>,
    /// `explicit`: the user is asked to allow what the app asks for (a third-party app);
    /// `implicit` (the default): no consent page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<String>,
    /// Where a logout token is posted when a session the app took part in ends (https, or
    /// http on loopback), and whether the token must carry `sid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_uri: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backchannel_logout_session_required: bool,
    /// The app's logo for its consent page: a PNG (at most 256 KiB, 1024×1024), base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_png: Option<String>,
    /// The algorithm of its ID, access and logout tokens: `RS256` (the default), `ES256` or
    /// `EdDSA`; the tenant needs a current key of it (`key rotate --alg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_alg: Option<String>,
    /// Its authorization requests must be pushed first (`POST {base_url}/par`, RFC 9126).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_par: bool,
    /// Its token requests must carry a DPoP proof (RFC 9449): its tokens are always bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_dpop: bool,
    /// `secret` (the default: a client secret is made) or `private_key_jwt` (no secret: the app
    /// signs a JWT with a key of `jwks`, a JWK Set's JSON, or of the one at `jwks_uri`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_auth: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
}

/// `PATCH /admin/v1/tenants/{slug}/apps/{client_id}`: changes to an application, validated as
/// `app create` is. Adding a value that is there already changes nothing; removing one that is not
/// there is refused (`value_not_present`), so a typo never passes as done. Removals are applied
/// before additions. The type cannot change (it decides whether the app has a secret).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct UpdateApp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_redirect_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_redirect_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_post_logout_redirect_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_post_logout_redirect_uris: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_cors_origins: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_cors_origins: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_scopes: Vec<String>,
    /// Switches the device authorization grant on or off (`native` apps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_flow: Option<bool>,
    /// `phr` or `phrh` to require that `acr`, `none` to require nothing more than the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_acr: Option<String>,
    /// `explicit` or `implicit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<String>,
    /// A back-channel logout URI, or `none` to stop sending logout tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_uri: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_session_required: Option<bool>,
    /// A new logo (PNG, base64), or `remove_logo` to show none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_png: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remove_logo: bool,
    /// `RS256`, `ES256` or `EdDSA`: the algorithm of the app's tokens from now on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_alg: Option<String>,
    /// Switches the requirement to push authorization requests (PAR) on or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_par: Option<bool>,
    /// Switches the requirement to send DPoP proofs on or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_dpop: Option<bool>,
    /// A private_key_jwt app's new keys: a JWK Set's JSON, or the URL of one (replacing the other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
}

impl UpdateApp {
    /// True when the request asks for no change at all.
    pub fn is_empty(&self) -> bool {
        *self == UpdateApp::default()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct App {
    pub client_id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub app_type: AppType,
    pub confidential: bool,
    pub redirect_uris: Vec<String>,
    pub post_logout_redirect_uris: Vec<String>,
    pub cors_origins: Vec<String>,
    pub scopes: Vec<String>,
    pub created: String,
    /// May use the device authorization grant (RFC 8628).
    #[serde(default)]
    pub device_flow: bool,
    /// The `acr` every sign-in to the app must reach, if any (`null`: none).
    #[serde(default)]
    pub require_acr: Option<String>,
    /// `explicit` (a consent page) or `implicit`.
    #[serde(default = "implicit")]
    pub consent: String,
    #[serde(default)]
    pub backchannel_logout_uri: Option<String>,
    #[serde(default)]
    pub backchannel_logout_session_required: bool,
    /// Hex SHA-256 of the app's logo, if it has one.
    #[serde(default)]
    pub logo_sha256: Option<String>,
    /// The algorithm of its tokens (an earlier daemon's apps sign RS256).
    #[serde(default)]
    pub signing_alg: SigningAlg,
    /// Its authorization requests must be pushed (PAR) first.
    #[serde(default)]
    pub require_par: bool,
    /// Its token requests must carry a DPoP proof.
    #[serde(default)]
    pub require_dpop: bool,
    /// How it authenticates (`secret` for an earlier daemon's apps).
    #[serde(default)]
    pub token_auth: TokenAuth,
    /// A private_key_jwt app's keys: the `kid`s of its registered JWK Set, or its `jwks_uri`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jwks_kids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
}

fn implicit() -> String {
    "implicit".to_owned()
}

/// Answer to `app create`: the app and, for confidential apps, its secret, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AppCreated {
    #[serde(flatten)]
    pub app: App,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SecretRotated {
    pub client_id: String,
    pub client_secret: String,
}

/// A signing key's state as `latchkey key list|rotate` shows it. There is no `retired` state on
/// the wire: `key retire` deletes the key (it leaves the JWKS at once), so a retired key is never
/// listed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum KeyState {
    /// Signs new tokens; exactly one per tenant.
    Current,
    /// No longer signs, still published in the JWKS so tokens it signed verify until it is
    /// retired. Earlier builds sent `retired` for this state; that spelling is still read.
    #[serde(alias = "retired")]
    Previous,
}

impl KeyState {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyState::Current => "current",
            KeyState::Previous => "previous",
        }
    }

    pub fn parse(s: &str) -> Option<KeyState> {
        match s {
            "current" => Some(KeyState::Current),
            "previous" | "retired" => Some(KeyState::Previous),
            _ => None,
        }
    }
}

/// A token signing algorithm: RS256 (every tenant has a key of it: OpenID Connect requires
/// it), ES256 (ECDSA on P-256) and EdDSA (Ed25519), which a tenant adds with `key rotate --alg`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum SigningAlg {
    #[default]
    RS256,
    ES256,
    EdDSA,
}

impl SigningAlg {
    pub const ALL: [SigningAlg; 3] = [SigningAlg::RS256, SigningAlg::ES256, SigningAlg::EdDSA];

    /// The JOSE name (`alg`).
    pub fn as_str(self) -> &'static str {
        match self {
            SigningAlg::RS256 => "RS256",
            SigningAlg::ES256 => "ES256",
            SigningAlg::EdDSA => "EdDSA",
        }
    }

    /// From its JOSE name, exactly as written.
    pub fn parse(s: &str) -> Option<SigningAlg> {
        SigningAlg::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

impl std::fmt::Display for SigningAlg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a confidential app authenticates at the token, revocation, introspection and PAR
/// endpoints: with its client secret, or with a JWT signed by one of its keys (RFC 7523).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TokenAuth {
    #[default]
    Secret,
    PrivateKeyJwt,
}

impl TokenAuth {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenAuth::Secret => "secret",
            TokenAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub fn parse(s: &str) -> Option<TokenAuth> {
        [TokenAuth::Secret, TokenAuth::PrivateKeyJwt].into_iter().find(|t| t.as_str() == s)
    }
}

/// `key rotate`: which algorithm's key to rotate (RS256 when absent: `{}`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RotateKey {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Key {
    pub kid: String,
    pub state: KeyState,
    pub algorithm: String,
    pub bits: u32,
    pub created: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_written_as_error_and_error_description_and_read_in_both_shapes() {
        let e = ErrorBody { code: "tenant_not_found".into(), message: "no tenant \"x\"".into() };
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(text, r#"{"error":"tenant_not_found","error_description":"no tenant \"x\""}"#);
        assert_eq!(serde_json::from_str::<ErrorBody>(&text).unwrap(), e);
        let older: ErrorBody =
            serde_json::from_str(r#"{"code":"tenant_not_found","message":"no tenant \"x\""}"#).unwrap();
        assert_eq!(older, e, "what daemons before 2026-11-27 sent");
    }

    #[test]
    fn app_created_flattens_the_app() {
        let app = App {
            client_id: "c".into(),
            name: "n".into(),
            app_type: AppType::Web,
            confidential: true,
            redirect_uris: vec![],
            post_logout_redirect_uris: vec![],
            cors_origins: vec![],
            scopes: vec![],
            created: "2026-01-01".into(),
            device_flow: false,
            require_acr: None,
            consent: "implicit".into(),
            backchannel_logout_uri: None,
            backchannel_logout_session_required: false,
            logo_sha256: None,
            signing_alg: SigningAlg::RS256,
            require_par: false,
            require_dpop: false,
            token_auth: TokenAuth::Secret,
            jwks_kids: vec![],
            jwks_uri: None,
        };
        let v = serde_json::to_value(AppCreated { app, client_secret: Some("s".into()) }).unwrap_or_default();
        assert_eq!(v["client_id"], "c");
        assert_eq!(v["type"], "web");
        assert_eq!(v["client_secret"], "s");
    }

    #[test]
    fn signing_algorithms_by_their_jose_names() {
        for a in SigningAlg::ALL {
            assert_eq!(SigningAlg::parse(a.as_str()), Some(a));
            assert_eq!(serde_json::to_value(a).unwrap_or_default(), a.as_str());
        }
        assert_eq!(SigningAlg::parse("es256"), None);
        assert_eq!(SigningAlg::parse("HS256"), None);
        assert!(serde_json::from_str::<RotateKey>(r#"{"algo":"ES256"}"#).is_err());
        assert_eq!(serde_json::from_str::<RotateKey>("{}").ok(), Some(RotateKey::default()));
    }

    #[test]
    fn key_states_on_the_wire() {
        assert_eq!(serde_json::to_value(KeyState::Previous).unwrap_or_default(), "previous");
        // What an earlier daemon sent for the same state still reads.
        let old: Result<KeyState, _> = serde_json::from_str("\"retired\"");
        assert_eq!(old.ok(), Some(KeyState::Previous));
        assert_eq!(KeyState::parse("current"), Some(KeyState::Current));
        assert_eq!(KeyState::parse("gone"), None);
    }

    #[test]
    fn create_tenant_rejects_unknown_fields() {
        let r: Result<CreateTenant, _> = serde_json::from_str(r#"{"slug":"a","bogus":1}"#);
        assert!(r.is_err());
    }
}

/// `POST /admin/v1/tenants/{slug}/users/invite`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InviteUser {
    pub email: String,
    pub name: String,
    #[serde(default)]
    pub roles: Vec<String>,
    /// The language of the invitation e-mail (and the user's later ones): en, de, fr, es, pt-BR,
    /// ja or zh-CN. Kept with the user; English when never given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Invitation {
    pub email: String,
    pub name: String,
    pub invite_url: String,
    pub expires_at: String,
    /// `Some(true)` when e-mailed, `Some(false)` when sending failed (see `email_error`), `None`
    /// when no `[smtp]` is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emailed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email_error: Option<String>,
}

/// `POST /admin/v1/tenants/{slug}/users/{email}/recover`
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Recovery {
    pub email: String,
    pub recovery_url: String,
    pub expires_at: String,
}

/// A credential as operators see it (`latchkey credential list`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AdminCredential {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub device: String,
    pub name: String,
    pub created: String,
    pub last_used: Option<String>,
    /// Backed up (a synced passkey) rather than bound to one device.
    pub synced: bool,
    pub sign_count: u32,
}

/// A user as operators see it (`latchkey user list|show`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct User {
    pub id: String,
    pub email: String,
    pub name: String,
    pub status: String,
    pub roles: Vec<String>,
    pub created: String,
    pub credentials: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRole {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Role {
    pub name: String,
    pub description: String,
    pub users: u64,
    pub created: String,
}

/// `POST .../roles/{name}/assign|unassign`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Emails {
    pub emails: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RoleChange {
    pub role: String,
    /// Users whose roles changed.
    pub changed: Vec<String>,
    /// Users who already had (or already lacked) the role.
    pub unchanged: Vec<String>,
}

/// One audit event, as `GET /admin/v1/audit?tenant=SLUG&since=UNIX&user=EMAIL&after=ID&limit=N`
/// (every tenant's and the daemon's own events unless `tenant` is given) and
/// `GET /admin/v1/tenants/{slug}/audit?...` (one tenant's) answer: oldest first by id. With
/// `cursor=` (empty to start, then the last event's `cursor`) instead of `after=`, the events that
/// committed after that one, in commit order, each with its `cursor`: what a follow reads, which
/// on PostgreSQL misses no event that commits after one with a larger id.
///
/// Admin operations have typed actions (`app.create`, `user.disable`, `key.retire`, …), the
/// socket peer as actor (`uid:0`), their object as subject (an e-mail, Client ID, key id, role or
/// provider) and `success` or `failure: <error code>` as outcome; reads are not recorded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AuditEvent {
    /// Position in the log, for `after=` (following the log).
    pub id: i64,
    /// RFC 3339, UTC. (Called `at` before issue 11; still read under that name.)
    #[serde(alias = "at")]
    pub time: String,
    /// The tenant's slug; `None` for daemon-wide events (a backup, an apply without tenants).
    #[serde(default)]
    pub tenant: Option<String>,
    pub actor: String,
    pub action: String,
    pub subject: Option<String>,
    pub outcome: String,
    pub detail: Option<String>,
    pub ip: Option<String>,
    /// Where a follow stands after this event (answers to `cursor=` only): pass it back as
    /// `cursor=` to read what committed after it. Opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The declarative configuration of `latchkey apply` / `latchkey export` (TOML on disk, JSON on
/// the socket). Things are matched by slug (tenants), name (roles, apps) and provider key (social).
/// Apply creates and updates what the file names and never deletes what it leaves out; an update
/// sets the file's values (an app's lists are replaced by the file's lists).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Declared {
    #[serde(default, rename = "tenant")]
    pub tenants: Vec<DeclaredTenant>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DeclaredTenant {
    pub slug: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rp_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    /// The brand of its pages (`tenant brand`); absent keeps what is set, `none` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_locale: Option<String>,
    /// The logo beside the name (`tenant brand --logo`): a PNG or SVG file, relative to the
    /// configuration file; `none` removes the logo. A file that does not exist (as an export names
    /// one before it is saved) keeps the logo set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo_file: Option<String>,
    /// Filled by the CLI from `logo_file` (base64, or `none`); never written in a file or export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    /// Which authenticators may register (`tenant update --attestation-policy`); absent keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attestation_policy: Option<AttestationPolicy>,
    /// The only AAGUIDs a verified policy accepts (`[]`: any the metadata lists); absent keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_aaguids: Option<Vec<String>>,
    #[serde(default, rename = "role", skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<DeclaredRole>,
    #[serde(default, rename = "app", skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<DeclaredApp>,
    #[serde(default, rename = "social", skip_serializing_if = "Vec::is_empty")]
    pub social: Vec<DeclaredSocial>,
}

/// A social provider in the declarative format (`[[tenant.social]]`). The file names where the
/// client secret is (`client_secret_file`); the CLI reads it and sends `client_secret` instead.
/// `export` names a file (`TENANT-PROVIDER.secret`) and never writes the secret. A provider that
/// exists keeps its stored secret when the entry has none, or names a file that does not exist
/// (the CLI then sends the name alone, for the daemon to say which file a new provider lacks).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DeclaredSocial {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_file: Option<String>,
    /// Filled by the CLI from `client_secret_file`; never written in a file or an export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github_api_url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_domains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_orgs: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_users: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DeclaredRole {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DeclaredApp {
    pub name: String,
    #[serde(rename = "type")]
    pub app_type: AppType,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(default)]
    pub post_logout_redirect_uris: Vec<String>,
    #[serde(default)]
    pub cors_origins: Vec<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
    /// A `native` app that may use the device authorization grant (RFC 8628).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_flow: bool,
    /// The `acr` every sign-in to the app must reach: `phr` (a passkey) or `phrh` (a
    /// device-bound passkey or security key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_acr: Option<String>,
    /// `explicit`: the user is asked to allow what the app asks for (a third-party app);
    /// `implicit` (the default): no consent page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<String>,
    /// Where a logout token is posted when a session the app took part in ends (https, or
    /// http on loopback), and whether the token must carry `sid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backchannel_logout_uri: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backchannel_logout_session_required: bool,
    /// `ES256` or `EdDSA` for tokens signed with that key of the tenant (`RS256`, the default,
    /// is left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_alg: Option<String>,
    /// Its authorization requests must be pushed (PAR) first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_par: bool,
    /// Its token requests must carry a DPoP proof (RFC 9449): its tokens are always bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_dpop: bool,
    /// `private_key_jwt`, with `jwks` (a JWK Set's JSON) or `jwks_uri`; absent: `secret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_auth: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyRequest {
    pub declared: Declared,
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ApplyResult {
    pub dry_run: bool,
    /// One line per change, e.g. "create app acme/Portal", with what an update changes; empty
    /// when nothing changes.
    pub changes: Vec<String>,
    /// The same changes, structured for scripts: one entry per line of `changes`.
    #[serde(default)]
    pub plan: Vec<PlannedChange>,
    /// Applications created now, with their secrets (shown this once).
    pub created_apps: Vec<AppCreatedIn>,
}

/// One step of an apply plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PlannedChange {
    /// `create` or `update`.
    pub action: String,
    /// `tenant`, `role`, `app` or `social`.
    pub kind: String,
    pub tenant: String,
    /// The role's or app's name, the social provider's key; the slug for a tenant.
    pub name: String,
    /// For an update, each field that changes (empty for a create).
    #[serde(default)]
    pub changes: Vec<FieldChange>,
}

/// One field an update changes. Lists are replaced whole by the file's list; `added` and
/// `removed` say what that replacement adds and takes away.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FieldChange {
    pub field: String,
    /// The stored value (`null` for a secret, which is never shown).
    pub old: serde_json::Value,
    /// The file's value (`null` for a secret).
    pub new: serde_json::Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AppCreatedIn {
    pub tenant: String,
    pub name: String,
    pub client_id: String,
    pub client_secret: Option<String>,
}

/// An invitation made by an import: the link to send the user.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct InvitedRow {
    pub email: String,
    pub name: String,
    /// Empty in a dry run.
    pub invite_url: String,
    /// With `[smtp]`: whether the invitation e-mail went out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emailed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email_error: Option<String>,
    /// The language of the invitation e-mail, when one was chosen (the CSV's `locale` column,
    /// or kept with the user from an earlier invitation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
}

/// A CSV row that was not imported, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RejectedRow {
    /// 1-based line number in the file (the header is line 1).
    pub row: u64,
    pub column: String,
    pub reason: String,
}

/// The rejected rows that share one reason: how many, and the first of them (as
/// [`RejectedRow::row`]), so that 3,334 rows naming a missing role read as one line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RejectedReason {
    pub column: String,
    pub reason: String,
    /// Rows with this reason.
    pub rows: u64,
    /// The first few of them, in file order.
    pub first_rows: Vec<u64>,
}

/// One line of the JSON-lines answer of `POST /admin/v1/tenants/{slug}/users/import`: progress
/// after each batch (its invitations travel with it, so neither side holds them all), then one
/// summary with counts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ImportLine {
    Progress {
        processed: u64,
        total: u64,
        invited: Vec<InvitedRow>,
        already_present: Vec<String>,
    },
    Summary {
        dry_run: bool,
        invited: u64,
        already_present: u64,
        /// The first rejected rows' problems, one entry each (a row may have several).
        rejected: Vec<RejectedRow>,
        /// How many rows were rejected (each counted once, however many problems it has).
        #[serde(default)]
        rejected_rows: u64,
        /// Every problem grouped by its reason, in order of first appearance.
        #[serde(default)]
        rejected_reasons: Vec<RejectedReason>,
        /// Set when the import stopped early (a re-run continues where it stopped).
        error: Option<String>,
    },
}

/// `POST /admin/v1/tenants/{slug}/users/reinvite`: fresh invite links for users who are still
/// `invited` (named by `emails`, or every one with `all_pending`). Each new link replaces the
/// user's older ones, which stop working. The answer is a stream of [`ReinviteLine`]s.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Reinvite {
    #[serde(default)]
    pub emails: Vec<String>,
    #[serde(default)]
    pub all_pending: bool,
    /// Report who would get a new link; issue none.
    #[serde(default)]
    pub dry_run: bool,
}

/// A user named in a reinvite who got no new link, and why ("already active", "no such user").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SkippedUser {
    pub email: String,
    pub reason: String,
}

/// One line of the JSON-lines answer of `POST .../users/reinvite`: progress after each batch
/// (with its new links), then one summary with counts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ReinviteLine {
    Progress {
        processed: u64,
        total: u64,
        invited: Vec<InvitedRow>,
        skipped: Vec<SkippedUser>,
    },
    Summary {
        dry_run: bool,
        invited: u64,
        skipped: u64,
        /// Set when the run stopped early (users handled before it keep their new links).
        error: Option<String>,
    },
}

/// `POST /admin/v1/tenants/{slug}/social`: enables a provider, or replaces its settings.
/// `kind` is `google`, `github` or `oidc`; `facebook` and `twitter` are refused as not available.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EnableSocial {
    pub kind: String,
    pub client_id: String,
    /// Read by the CLI from a file or standard input; sealed by the daemon, never shown again.
    pub client_secret: String,
    /// The button's label; for `oidc` also the provider's key in URLs (`Entra` → `/login/entra`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `oidc`: the issuer to discover; `google`: overrides `https://accounts.google.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// `github`: overrides `https://github.com` (GitHub Enterprise Server, tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github_url: Option<String>,
    /// `github`: overrides `https://api.github.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github_api_url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_domains: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_orgs: Vec<String>,
    #[serde(default)]
    pub create_users: bool,
    /// Save the provider without first reading its discovery document (or GitHub's API root).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_verify: bool,
}

/// A social provider as `latchkey social list` shows it: never its secret.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SocialProvider {
    /// The key in URLs: `/login/{provider}`.
    pub provider: String,
    pub kind: String,
    pub label: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github_api_url: Option<String>,
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    #[serde(default)]
    pub allowed_orgs: Vec<String>,
    #[serde(default)]
    pub create_users: bool,
    /// The redirect URI to register at the provider.
    pub callback_url: String,
    /// `social enable` only: links removed because the provider's issuer or GitHub API URL
    /// changed (their subjects belonged to the old one; users link again at their next sign-in).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub links_removed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `latchkey webhook add`: a subscription to a tenant's audit events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CreateWebhook {
    /// Where deliveries are POSTed: `https`, or `http` on the loopback interface.
    pub url: String,
    /// Globs of audit actions (`user.*`, `role.assign`, `*`).
    pub events: Vec<String>,
    /// A Standard Webhooks secret (`whsec_` and the base64 of 24 to 64 bytes); generated (and
    /// answered once) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// A webhook subscription.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Webhook {
    pub id: i64,
    pub url: String,
    pub events: Vec<String>,
    /// Deliveries waiting (not yet delivered, not failed).
    pub pending: i64,
    /// RFC 3339.
    pub created: String,
    /// The secret, only in the answer that generated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// One delivery of an event to a subscription (`latchkey webhook deliveries`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct WebhookDelivery {
    /// The delivery's id: its `webhook-id` header is `msg_{id}`.
    pub id: i64,
    /// The subscription's id.
    pub webhook: i64,
    /// The audit action (`user.invite`).
    pub event: String,
    /// Who or what the event is about, when it names one.
    pub subject: String,
    /// `pending` (not tried yet), `retrying`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i64,
    /// When the event was queued (RFC 3339).
    pub created: String,
    /// The last answer (`HTTP 200`, `HTTP 503`, a connection error); null before the first try.
    #[serde(default)]
    pub answer: Option<String>,
}
