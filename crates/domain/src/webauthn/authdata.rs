//! The few facts we read from authenticator data ourselves: flags, counter and AAGUID.
//! webauthn-rs verifies everything; this only extracts what we record per credential.

use serde_cbor_2::Value;

pub const FLAG_UP: u8 = 0x01;
pub const FLAG_UV: u8 = 0x04;
pub const FLAG_BE: u8 = 0x08;
pub const FLAG_BS: u8 = 0x10;
pub const FLAG_AT: u8 = 0x40;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthData {
    pub flags: u8,
    pub sign_count: u32,
    /// Present when attested credential data is included (registration).
    pub aaguid: Option<[u8; 16]>,
}

impl AuthData {
    pub fn backup_eligible(&self) -> bool {
        self.flags & FLAG_BE != 0
    }
    pub fn backed_up(&self) -> bool {
        self.flags & FLAG_BS != 0
    }
}

/// Parses raw authenticator data (WebAuthn §6.1).
pub fn parse(data: &[u8]) -> Option<AuthData> {
    let flags = *data.get(32)?;
    let count = data.get(33..37)?;
    let sign_count = u32::from_be_bytes([count[0], count[1], count[2], count[3]]);
    let aaguid = if flags & FLAG_AT != 0 {
        let mut a = [0u8; 16];
        a.copy_from_slice(data.get(37..53)?);
        Some(a)
    } else {
        None
    };
    Some(AuthData { flags, sign_count, aaguid })
}

/// Extracts and parses `authData` from a CBOR attestation object.
pub fn from_attestation_object(object: &[u8]) -> Option<AuthData> {
    let value: Value = serde_cbor_2::from_slice(object).ok()?;
    let Value::Map(map) = value else { return None };
    let auth = map.iter().find_map(|(k, v)| match (k, v) {
        (Value::Text(k), Value::Bytes(b)) if k == "authData" => Some(b),
        _ => None,
    })?;
    parse(auth)
}

/// The attestation statement's format (`fmt`) and certificates (`attStmt.x5c`, DER, leaf
/// first; empty for none and self attestation). Read only after webauthn-rs has verified the
/// statement: it checks the signature of every format it accepts with the first of these.
pub fn attestation_certificates(object: &[u8]) -> Option<(String, Vec<Vec<u8>>)> {
    let value: Value = serde_cbor_2::from_slice(object).ok()?;
    let Value::Map(map) = value else { return None };
    let text_key = |k: &Value, name: &str| matches!(k, Value::Text(k) if k == name);
    let fmt = map.iter().find_map(|(k, v)| match v {
        Value::Text(f) if text_key(k, "fmt") => Some(f.clone()),
        _ => None,
    })?;
    let x5c = map
        .iter()
        .find_map(|(k, v)| match v {
            Value::Map(stmt) if text_key(k, "attStmt") => stmt.iter().find_map(|(k, v)| match v {
                Value::Array(certs) if text_key(k, "x5c") => Some(
                    certs
                        .iter()
                        .filter_map(|c| match c {
                            Value::Bytes(b) => Some(b.clone()),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => None,
            }),
            _ => None,
        })
        .unwrap_or_default();
    Some((fmt, x5c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flags_counter_and_aaguid() {
        let mut d = vec![0u8; 32];
        d.push(FLAG_UP | FLAG_UV | FLAG_BE | FLAG_AT);
        d.extend_from_slice(&7u32.to_be_bytes());
        d.extend_from_slice(&[0xAB; 16]);
        let a = parse(&d).unwrap();
        assert_eq!(a.sign_count, 7);
        assert!(a.backup_eligible() && !a.backed_up());
        assert_eq!(a.aaguid, Some([0xAB; 16]));
        assert_eq!(parse(&d[..30]), None);
    }
}
