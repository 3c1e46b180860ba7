//! Stable, snake_case error codes. Scripts match on these, so they never change meaning once
//! released; add new ones instead.

pub const INVALID_INPUT: &str = "invalid_input";
/// A request carrying what no field may hold: a control character in a parameter or a JSON string.
pub const INVALID_REQUEST: &str = "invalid_request";
pub const MALFORMED_JSON: &str = "malformed_json";
pub const UNSUPPORTED_MEDIA_TYPE: &str = "unsupported_media_type";
pub const PAYLOAD_TOO_LARGE: &str = "payload_too_large";
pub const NOT_FOUND: &str = "not_found";
pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
pub const CONFIRMATION_REQUIRED: &str = "confirmation_required";
pub const INTERNAL: &str = "internal_error";
pub const UNAVAILABLE: &str = "unavailable";

pub const INVALID_SLUG: &str = "invalid_slug";
pub const RESERVED_SLUG: &str = "reserved_slug";
pub const TENANT_EXISTS: &str = "tenant_exists";
pub const BASE_URL_TAKEN: &str = "base_url_taken";
pub const TENANT_NOT_FOUND: &str = "tenant_not_found";
pub const INVALID_BASE_URL: &str = "invalid_base_url";
pub const INVALID_RP_ID: &str = "invalid_rp_id";

pub const APP_NOT_FOUND: &str = "app_not_found";
pub const INVALID_REDIRECT_URI: &str = "invalid_redirect_uri";
pub const INVALID_ORIGIN: &str = "invalid_origin";
pub const INVALID_SCOPE: &str = "invalid_scope";
pub const NOT_CONFIDENTIAL: &str = "not_confidential";
/// Another application of the tenant has this name (names are unique per tenant: `apply` matches
/// apps by name).
pub const APP_NAME_TAKEN: &str = "app_name_taken";
/// `app update --remove-…` named a value the application does not have.
pub const VALUE_NOT_PRESENT: &str = "value_not_present";
/// `--device-flow` on an application that is not `native`.
pub const DEVICE_FLOW_NOT_NATIVE: &str = "device_flow_not_native";
/// `/device/lookup` or `/device/decide`: the user code is unknown, used or expired.
pub const INVALID_USER_CODE: &str = "invalid_user_code";

pub const KEY_NOT_FOUND: &str = "key_not_found";
pub const KEY_IS_CURRENT: &str = "key_is_current";
/// An app asks for a signing algorithm its tenant has no current key of (`key rotate --alg`).
pub const SIGNING_KEY_MISSING: &str = "signing_key_missing";

pub const INVALID_CHALLENGE: &str = "invalid_challenge";
pub const REGISTRATION_NOT_ALLOWED: &str = "registration_not_allowed";
pub const MALFORMED_CREDENTIAL: &str = "malformed_credential";
pub const ORIGIN_MISMATCH: &str = "origin_mismatch";
pub const RP_ID_MISMATCH: &str = "rp_id_mismatch";
pub const USER_NOT_PRESENT: &str = "user_not_present";
pub const USER_NOT_VERIFIED: &str = "user_not_verified";
pub const UNSUPPORTED_ALGORITHM: &str = "unsupported_algorithm";
pub const INVALID_SIGNATURE: &str = "invalid_signature";
pub const COUNTER_REGRESSION: &str = "counter_regression";
pub const UNKNOWN_CREDENTIAL: &str = "unknown_credential";
pub const MISSING_USER_HANDLE: &str = "missing_user_handle";
pub const INVALID_USER_HANDLE: &str = "invalid_user_handle";
pub const CREDENTIAL_EXISTS: &str = "credential_exists";
/// The tenant's attestation policy refuses this authenticator (`verified`: no attestation, not
/// in the imported FIDO metadata, a revoked or compromised status, not on the allowed list).
pub const AUTHENTICATOR_NOT_ALLOWED: &str = "authenticator_not_allowed";
/// SCIM errors (RFC 7644 §3.12), each answered with its `scimType`.
pub const SCIM_INVALID_FILTER: &str = "invalid_filter";
pub const SCIM_INVALID_SYNTAX: &str = "invalid_syntax";
pub const SCIM_INVALID_VALUE: &str = "invalid_value";
pub const SCIM_INVALID_PATH: &str = "invalid_path";
pub const SCIM_NO_TARGET: &str = "no_target";
pub const SCIM_UNIQUENESS: &str = "uniqueness";
pub const SCIM_MUTABILITY: &str = "mutability";
/// `If-Match` names another version than the resource's (412).
pub const PRECONDITION_FAILED: &str = "precondition_failed";
/// A FIDO metadata BLOB that does not verify or parse (`latchkey mds import`).
pub const INVALID_METADATA: &str = "invalid_metadata";
/// A FIDO metadata BLOB no newer than the one imported (its serial number); `force` takes it.
pub const METADATA_NOT_NEWER: &str = "metadata_not_newer";
pub const VERIFICATION_FAILED: &str = "verification_failed";
pub const USER_DISABLED: &str = "user_disabled";
pub const LOGIN_REQUIRED: &str = "login_required";
pub const CREDENTIAL_NOT_FOUND: &str = "credential_not_found";
pub const LAST_CREDENTIAL: &str = "last_credential";
pub const INVALID_ORIGIN_HEADER: &str = "origin_not_allowed";
pub const RATE_LIMITED: &str = "rate_limited";

pub const USER_NOT_FOUND: &str = "user_not_found";
pub const USER_EXISTS: &str = "user_exists";
pub const INVALID_EMAIL: &str = "invalid_email";
pub const INVALID_NAME: &str = "invalid_name";
pub const UNKNOWN_ROLE: &str = "unknown_role";
pub const ROLE_EXISTS: &str = "role_exists";
pub const INVALID_ROWS: &str = "invalid_rows";
/// `latchkey user import` stopped part-way (a re-run continues).
pub const IMPORT_FAILED: &str = "import_failed";
/// `latchkey backup` on a daemon whose data is in PostgreSQL: use `pg_dump`.
pub const BACKUP_UNSUPPORTED: &str = "backup_unsupported";

/// Bearer-token refusals on the JSON API carry RFC 6750's own codes.
pub const INVALID_TOKEN: &str = "invalid_token";
pub const INSUFFICIENT_SCOPE: &str = "insufficient_scope";
/// DPoP (RFC 9449) refusals, at the token endpoint (400) and at resources (401, `DPoP`
/// challenge): a proof missing, malformed or not fitting the request or token; a nonce needed.
pub const INVALID_DPOP_PROOF: &str = "invalid_dpop_proof";
pub const USE_DPOP_NONCE: &str = "use_dpop_nonce";

pub const PROVIDER_NOT_AVAILABLE: &str = "provider_not_available";
pub const UNKNOWN_PROVIDER: &str = "unknown_provider";
pub const PROVIDER_NOT_FOUND: &str = "provider_not_found";
pub const INVALID_PROVIDER: &str = "invalid_provider";
pub const SOCIAL_STATE_INVALID: &str = "social_state_invalid";
pub const UPSTREAM_REFUSED: &str = "upstream_refused";
pub const PROVIDER_UNREACHABLE: &str = "provider_unreachable";
pub const EMAIL_NOT_VERIFIED: &str = "email_not_verified";
pub const DOMAIN_NOT_ALLOWED: &str = "domain_not_allowed";
pub const ORG_NOT_ALLOWED: &str = "org_not_allowed";
pub const NO_ACCOUNT: &str = "no_account";
pub const ALREADY_LINKED: &str = "already_linked";
/// Linking a social account needs a recent passkey sign-in in the session (the account page
/// then asks for the passkey).
pub const PASSKEY_REQUIRED: &str = "passkey_required";
/// Webhooks: a URL, event glob or secret refused; an unknown subscription or delivery; a
/// redelivery of one still being tried.
pub const INVALID_WEBHOOK: &str = "invalid_webhook";
pub const WEBHOOK_NOT_FOUND: &str = "webhook_not_found";
pub const DELIVERY_NOT_FOUND: &str = "delivery_not_found";
pub const DELIVERY_PENDING: &str = "delivery_pending";
