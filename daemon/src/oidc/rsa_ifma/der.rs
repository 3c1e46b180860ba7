//! Just enough DER to read the integers of an RSA key in PKCS#8 (RFC 5208, RFC 8017 A.1.2).

/// The parts of an RSAPrivateKey, big-endian without leading zeros.
pub struct RsaParts<'a> {
    pub n: &'a [u8],
    pub e: &'a [u8],
    pub p: &'a [u8],
    pub q: &'a [u8],
    pub dp: &'a [u8],
    pub dq: &'a [u8],
    pub qinv: &'a [u8],
}

/// Splits one TLV with the given tag off the front of `input`: (contents, rest).
fn take(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, rest) = input.split_first()?;
    if t != tag {
        return None;
    }
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 3 || rest.len() < count {
            return None;
        }
        let (bytes, after) = rest.split_at(count);
        rest = after;
        bytes.iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b))
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// A non-negative INTEGER without its sign byte.
fn integer(input: &[u8]) -> Option<(&[u8], &[u8])> {
    let (mut v, rest) = take(input, 0x02)?;
    if v.first().is_some_and(|b| b & 0x80 != 0) {
        return None;
    }
    while let [0, tail @ ..] = v {
        v = tail;
    }
    Some((v, rest))
}

/// The RSA key inside a PKCS#8 PrivateKeyInfo.
pub fn rsa_private_key(der: &[u8]) -> Option<RsaParts<'_>> {
    let (info, _) = take(der, 0x30)?;
    let (_version, info) = integer(info)?;
    let (_algorithm, info) = take(info, 0x30)?;
    let (key, _) = take(info, 0x04)?;
    let (key, _) = take(key, 0x30)?;
    let (version, key) = integer(key)?;
    if !version.is_empty() {
        return None; // two-prime keys only (version 0)
    }
    let (n, key) = integer(key)?;
    let (e, key) = integer(key)?;
    let (_d, key) = integer(key)?;
    let (p, key) = integer(key)?;
    let (q, key) = integer(key)?;
    let (dp, key) = integer(key)?;
    let (dq, key) = integer(key)?;
    let (qinv, _) = integer(key)?;
    Some(RsaParts { n, e, p, q, dp, dq, qinv })
}
