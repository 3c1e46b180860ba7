//! A human label for a credential: the authenticator's product name when its AAGUID is known,
//! else the registering browser and OS from its User-Agent ("Chrome on Linux").

/// Well-known AAGUIDs of passkey providers and security keys.
const KNOWN: &[(&str, &str)] = &[
    ("fbfc3007-154e-4ecc-8c0b-6e020557d7bd", "iCloud Keychain"),
    ("dd4ec289-e01d-41c9-bb89-70fa845d4bf2", "iCloud Keychain (Managed)"),
    ("ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4", "Google Password Manager"),
    ("adce0002-35bc-c60a-648b-0b25f1f05503", "Chrome on Mac"),
    ("08987058-cadc-4b81-b6e1-30de50dcbe96", "Windows Hello"),
    ("9ddd1817-af5a-4672-a2b9-3e3dd95000a9", "Windows Hello"),
    ("6028b017-b1d4-4c02-b4b3-afcdafc96bb2", "Windows Hello"),
    ("bada5566-a7aa-401f-bd96-45619a55120d", "1Password"),
    ("d548826e-79b4-db40-a3d8-11116f7e8349", "Bitwarden"),
    ("531126d6-e717-415c-9320-3d9aa6981239", "Dashlane"),
    ("50726f74-6f6e-5061-7373-50726f746f6e", "Proton Pass"),
    ("fdb141b2-5d84-443e-8a35-4698c205a502", "KeePassXC"),
    ("53414d53-554e-4700-0000-000000000000", "Samsung Pass"),
    ("cb69481e-8ff7-4039-93ec-0a2729a154a8", "YubiKey 5"),
    ("ee882879-721c-4913-9775-3dfcce97072a", "YubiKey 5"),
    ("fa2b99dc-9e39-4257-8f92-4a30d23c4118", "YubiKey 5 NFC"),
    ("2fc0579f-8113-47ea-b116-bb5a8db9202a", "YubiKey 5 NFC"),
    ("c5ef55ff-ad9a-4b9f-b580-adebafe026d0", "YubiKey 5Ci"),
    ("73bb0cd4-e502-49b8-9c6f-b59445bf720b", "YubiKey 5 FIPS"),
    ("149a2021-8ef6-4133-96b8-81f8d5b7f1f5", "Security Key by Yubico"),
    ("6d44ba9b-f6ec-2e49-b930-0c8fe920cb73", "Security Key NFC by Yubico"),
    ("42b4fb4a-2866-43b2-9bf7-6c6669c2e5d3", "Google Titan Security Key"),
];

pub fn format_aaguid(a: &[u8; 16]) -> String {
    let h: String = a.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

pub fn known_product(aaguid: &[u8; 16]) -> Option<&'static str> {
    let text = format_aaguid(aaguid);
    KNOWN.iter().find(|(id, _)| *id == text).map(|(_, name)| *name)
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
        assert_eq!(label(Some(&icloud), None, false), "iCloud Keychain");
        let linux_chrome =
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
        assert_eq!(label(Some(&[0; 16]), Some(linux_chrome), false), "Chrome on Linux");
        assert_eq!(label(None, Some(linux_chrome), true), "Chrome on Linux");
        assert_eq!(label(None, None, true), "Security key");
        let iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1";
        assert_eq!(from_user_agent(iphone).as_deref(), Some("Safari on iOS"));
        assert_eq!(label(None, None, false), "Passkey");
    }
}
