//! A human label for a credential: the authenticator's product name when its AAGUID is known,
//! else the registering browser and OS from its User-Agent ("Chrome on Linux").

/// Names of passkey providers and security keys by AAGUID: the community-maintained list of
/// passkey providers (attributed in the file), then security keys. Parsed once.
static KNOWN: std::sync::LazyLock<std::collections::HashMap<&'static str, &'static str>> =
    std::sync::LazyLock::new(|| {
        include_str!("aaguids.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('\t'))
            .map(|(id, name)| (id.trim(), name.trim()))
            .collect()
    });

pub fn format_aaguid(a: &[u8; 16]) -> String {
    let h = crate::crypto::hex(a);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

pub fn known_product(aaguid: &[u8; 16]) -> Option<&'static str> {
    KNOWN.get(format_aaguid(aaguid).as_str()).copied()
}

/// The label a credential is shown with: its authenticator's name when its stored AAGUID is in
/// the list bundled now (so credentials registered before a provider joined it get its name),
/// else the label stored at registration.
pub fn shown_label(row: &crate::store::credentials::CredentialRow) -> String {
    let aaguid = row.aaguid.as_deref().and_then(|a| <[u8; 16]>::try_from(a).ok());
    match aaguid.as_ref().and_then(known_product) {
        Some(name) => name.to_owned(),
        None => row.device.clone(),
    }
}

/// "Chrome on Linux", "Safari on iOS", … from a User-Agent header.
pub fn from_user_agent(ua: &str) -> Option<String> {
    let browser = if ua.contains("Edg/") {
        "Edge"
    } else if ua.contains("OPR/") {
        "Opera"
    } else if ua.contains("Firefox/") {
        "Firefox"
    } else if ua.contains("Chrome/") || ua.contains("Chromium/") || ua.contains("CriOS/") {
        "Chrome"
    } else if ua.contains("Safari/") {
        "Safari"
    } else {
        return None;
    };
    let os = if ua.contains("iPhone") || ua.contains("iPad") {
        "iOS"
    } else if ua.contains("Android") {
        "Android"
    } else if ua.contains("Windows") {
        "Windows"
    } else if ua.contains("Mac OS X") || ua.contains("Macintosh") {
        "macOS"
    } else if ua.contains("CrOS") {
        "ChromeOS"
    } else if ua.contains("Linux") {
        "Linux"
    } else {
        return Some(browser.to_owned());
    };
    Some(format!("{browser} on {os}"))
}

/// The label stored with a new credential.
pub fn label(aaguid: Option<&[u8; 16]>, user_agent: Option<&str>, roaming: bool) -> String {
    if let Some(name) = aaguid.and_then(known_product) {
        return name.to_owned();
    }
    match (user_agent.and_then(from_user_agent), roaming) {
        (Some(ua), _) => ua,
        (None, false) => "Passkey".to_owned(),
        (None, true) => "Security key".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        let icloud = [0xfb, 0xfc, 0x30, 0x07, 0x15, 0x4e, 0x4e, 0xcc, 0x8c, 0x0b, 0x6e, 0x02, 0x05, 0x57, 0xd7, 0xbd];
        assert_eq!(label(Some(&icloud), None, false), "Apple Passwords", "the community list's name");
        let yubikey = [0xcb, 0x69, 0x48, 0x1e, 0x8f, 0xf7, 0x40, 0x39, 0x93, 0xec, 0x0a, 0x27, 0x29, 0xa1, 0x54, 0xa8];
        assert_eq!(known_product(&yubikey), Some("YubiKey 5"), "a security key of Latchkey's own list");
        assert!(KNOWN.len() > 50, "{}", KNOWN.len());
        let linux_chrome =
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
        assert_eq!(label(Some(&[0; 16]), Some(linux_chrome), false), "Chrome on Linux");
        assert_eq!(label(None, Some(linux_chrome), true), "Chrome on Linux");
        assert_eq!(label(None, None, true), "Security key");
        let iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1";
        assert_eq!(from_user_agent(iphone).as_deref(), Some("Safari on iOS"));
        assert_eq!(label(None, None, false), "Passkey");
    }

    #[test]
    fn a_credential_is_shown_with_the_name_the_list_has_now() {
        let mut row = crate::store::testing::credential_row(crate::store::users::UserId(1), b"c");
        row.device = "Chrome on Mac".into();
        row.aaguid =
            Some(vec![0xfb, 0xfc, 0x30, 0x07, 0x15, 0x4e, 0x4e, 0xcc, 0x8c, 0x0b, 0x6e, 0x02, 0x05, 0x57, 0xd7, 0xbd]);
        assert_eq!(shown_label(&row), "Apple Passwords");
        row.aaguid = Some(vec![0; 16]);
        assert_eq!(shown_label(&row), "Chrome on Mac");
        row.aaguid = None;
        assert_eq!(shown_label(&row), "Chrome on Mac");
    }
}
