//! The Standard Webhooks signature: `webhook-signature: v1,<base64 HMAC-SHA256(key,
//! "{id}.{timestamp}.{body}")>`, the key being the base64 after `whsec_` of the subscription's
//! secret.

use aws_lc_rs::hmac;
use base64::Engine as _;

/// The `webhook-signature` value of one delivery; `None` for a secret that is not `whsec_…`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &str) -> Option<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let key = b64.decode(secret.strip_prefix("whsec_")?).ok()?;
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), format!("{id}.{timestamp}.{body}").as_bytes());
    Some(format!("v1,{}", b64.encode(tag.as_ref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Standard Webhooks specification's example, as the `standardwebhooks` PyPI library
    /// signs it.
    #[test]
    fn signs_as_the_specification() {
        assert_eq!(
            sign(
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1614265330,
                r#"{"test": 2432232314}"#
            )
            .as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
        assert_eq!(sign("nope", "m", 1, "{}"), None);
    }
}
