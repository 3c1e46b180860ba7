//! Stable, snake_case error codes. Scripts match on these, so they never change meaning once
//! released; add new ones instead.

pub const INVALID_INPUT: &str = "invalid_input";
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

pub const KEY_NOT_FOUND: &str = "key_not_found";
pub const KEY_IS_CURRENT: &str = "key_is_current";
