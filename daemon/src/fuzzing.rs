//! Hooks for the fuzz targets under `fuzz/`: not an API, may change at any time. Each builds what
//! a target needs without a database or a listener.

use latchkey_domain::oidc::keys::SigningKey;
use latchkey_domain::registry::TenantRuntime;
use latchkey_store::KeyState;
use latchkey_store::tenants::TenantRow;

/// A tenant as the registry holds it, built from a row and its keys without a database (its
/// `sid` key from a fixed key-encryption key): the first key is the current one, the others
/// previous ones.
pub fn tenant_runtime(
    row: &TenantRow,
    keys: Vec<SigningKey>,
    public_url: &str,
) -> Result<TenantRuntime, latchkey_domain::error::Error> {
    let kek = latchkey_domain::crypto::Kek::from_bytes(&[0; 32])?;
    let states = std::iter::once(KeyState::Current).chain(std::iter::repeat(KeyState::Previous));
    TenantRuntime::build(row, states.zip(keys).collect(), public_url, kek.session_ids())
}

/// What `/token` reads of a device code poll before it opens the database (RFC 8628 §3.4):
/// the client as it presented itself (HTTP Basic or the form), `grant_type` and
/// `device_code`, with the one rule for repeated and empty parameters.
pub fn device_token_request(
    authorization: Option<&str>,
    body: &[u8],
) -> Result<(latchkey_domain::oidc::clients::Presented, String, String), latchkey_domain::oidc::error::OAuthError> {
    let form = latchkey_domain::params::Params::parse(body);
    let client = latchkey_domain::oidc::clients::presented(authorization, &form)?;
    let grant = latchkey_domain::oidc::issue::require(&form, "grant_type")?.to_owned();
    let code = latchkey_domain::oidc::issue::require(&form, "device_code")?.to_owned();
    Ok((client, grant, code))
}

/// Text as the page templates (maud) escape it, in element content and attribute values alike.
pub fn escaped(text: &str) -> String {
    maud::html! { (text) }.into_string()
}
