//! The vector arithmetic itself, for x86_64 (see the crate's documentation).

mod blinding;
mod kernel;
mod num;

use aws_lc_rs::signature::{ParsedPublicKey, RSA_PKCS1_2048_8192_SHA256};
use zeroize::{Zeroize, ZeroizeOnDrop};

use blinding::{BlindPair, Blinder};
use kernel::LaneKey;
use num::{L52, U1024};

/// Whether this CPU has the instructions (the standard library caches what it detects).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512ifma")
}

/// One CRT half: a prime with its Montgomery constants, its exponent, and the blinding's.
#[derive(Zeroize, ZeroizeOnDrop)]
struct Half {
    n: L52,
    k0: u64,
    rr: L52,
    rrr: L52,
    /// d mod (prime − 1).
    exp: U1024,
    /// prime − 1 − e: t^this = t^(−e) for the blinding ([`blinding`]).
    blind_exp: U1024,
}

impl Half {
    fn new(prime: &U1024, exp: &U1024, e: &U1024) -> Half {
        // R = 2^1040: R² and R³ mod the prime by doubling 1 (constant time, once per key).
        let one = U1024::one();
        Half {
            n: num::l52(prime),
            k0: num::neg_inv_52(prime.0[0]),
            rr: num::l52(&num::shl_mod(&one, 2 * 1040, prime)),
            rrr: num::l52(&num::shl_mod(&one, 3 * 1040, prime)),
            exp: exp.duplicate(),
            blind_exp: num::sub_minus_one(prime, e),
        }
    }

    fn lane(&self) -> LaneKey<'_> {
        self.lane_with(&self.exp)
    }

    /// This prime's lane with another exponent.
    fn lane_with<'a>(&'a self, exp: &'a U1024) -> LaneKey<'a> {
        LaneKey { n: &self.n, k0: &self.k0, rr: &self.rr, rrr: &self.rrr, exp }
    }
}

/// An RSA-2048 private key prepared for the vector arithmetic. Every part is wiped when it is
/// dropped (its fields' types see to it).
pub struct IfmaKey {
    p: Half,
    q: Half,
    /// q as 64-bit limbs, for the recombination.
    q64: U1024,
    /// q⁻¹·R mod p (Montgomery form of the CRT coefficient).
    qinv_r: L52,
    blinder: Blinder,
    /// The public key, parsed once by aws-lc for the check of every signature (parsing it for
    /// each check cost a tenth of the signer's time).
    public: ParsedPublicKey,
}

impl std::fmt::Debug for IfmaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IfmaKey")
    }
}

impl IfmaKey {
    /// The key of a PKCS#8 RSA private key, when this CPU has the instructions and the key is
    /// RSA-2048 with two 1,024-bit primes; `None` otherwise (sign with aws-lc).
    pub fn from_pkcs8(der: &[u8]) -> Option<IfmaKey> {
        if !available() {
            return None;
        }
        let info = pkcs8::PrivateKeyInfoRef::try_from(der).ok()?;
        let k = pkcs1::RsaPrivateKeyRef::try_from(info.private_key).ok()?;
        let full = |b: &[u8]| b.len() == 128 && b[0] & 0x80 != 0;
        if k.other_prime_infos.is_some()
            || k.modulus.as_bytes().len() != 256
            || !full(k.prime1.as_bytes())
            || !full(k.prime2.as_bytes())
        {
            return None;
        }
        let int = |u: &pkcs1::UintRef<'_>| num::u1024_from_be(u.as_bytes());
        let (p, q, e) = (int(&k.prime1)?, int(&k.prime2)?, int(&k.public_exponent)?);
        let (dp, dq, qinv) = (int(&k.exponent1)?, int(&k.exponent2)?, int(&k.coefficient)?);
        let public = pkcs1::der::Encode::to_der(&k.public_key()).ok()?;
        let key = IfmaKey {
            p: Half::new(&p, &dp, &e),
            q: Half::new(&q, &dq, &e),
            qinv_r: num::l52(&num::shl_mod(&qinv, 1040, &p)),
            q64: q,
            blinder: Blinder::default(),
            public: ParsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, public).ok()?,
        };
        // p, dp, dq, qinv (and the moved q's husk) are wiped as they drop here. A key this code
        // gets wrong (its arithmetic or its blinding) must never sign: try it once.
        let probe = sign_pair([(&key, b"latchkey: key self-test".as_slice()), (&key, b"second".as_slice())]);
        probe.iter().all(Option::is_some).then_some(key)
    }

    fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        self.public.verify_sig(message, signature).is_ok()
    }
}

/// The DER DigestInfo prefix of SHA-256 (RFC 8017 §9.2, note 1).
const SHA256_PREFIX: [u8; 19] =
    [0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20];

/// EMSA-PKCS1-v1_5 encoding of SHA-256(message) for a 2,048-bit modulus (RFC 8017 §9.2).
fn encode(message: &[u8]) -> [u8; 256] {
    let mut em = [0xffu8; 256];
    em[0] = 0;
    em[1] = 1;
    let tail = 256 - SHA256_PREFIX.len() - 32;
    em[tail - 1] = 0;
    em[tail..tail + SHA256_PREFIX.len()].copy_from_slice(&SHA256_PREFIX);
    em[256 - 32..].copy_from_slice(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, message).as_ref());
    em
}

/// RSASSA-PKCS1-v1_5 SHA-256 signatures of two messages (under the same or different keys), each
/// blinded and checked with the public key; `None` for one that failed its check (never expected),
/// or for both when the random generator failed.
pub fn sign_pair(jobs: [(&IfmaKey, &[u8]); 2]) -> [Option<[u8; 256]>; 2] {
    let [(a, _), (b, _)] = jobs;
    let (Some(blind_a), Some(blind_b)) = (a.next_blinding(), b.next_blinding()) else {
        return [None, None];
    };
    sign_pair_blinded(jobs, [&blind_a, &blind_b])
}

/// [`sign_pair`] with given blinding pairs (the tests give their own).
fn sign_pair_blinded(jobs: [(&IfmaKey, &[u8]); 2], blinds: [&BlindPair; 2]) -> [Option<[u8; 256]>; 2] {
    let [sig_a, sig_b] = unchecked(jobs, blinds);
    let [(a, ma), (b, mb)] = jobs;
    [checked(a, ma, sig_a), checked(b, mb, sig_b)]
}

/// The arithmetic of [`sign_pair`] (blinding included) without the check, its results wiped and
/// discarded: for the signing bench's timing test, which times the secret arithmetic apart from
/// aws-lc's verification with the public key (whose time depends on the public key). Gives
/// nothing back, so it cannot be used to sign.
#[doc(hidden)]
pub fn pair_arithmetic_for_timing(jobs: [(&IfmaKey, &[u8]); 2]) {
    let [(a, _), (b, _)] = jobs;
    if let (Some(blind_a), Some(blind_b)) = (a.next_blinding(), b.next_blinding()) {
        let mut out = unchecked(jobs, [&blind_a, &blind_b]);
        std::hint::black_box(&out);
        out.zeroize();
    }
}

/// The two signatures as computed, not yet checked.
fn unchecked(jobs: [(&IfmaKey, &[u8]); 2], blinds: [&BlindPair; 2]) -> [[u8; 256]; 2] {
    let [(a, ma), (b, mb)] = jobs;
    let (sa, sb) = (num::split_2048(&encode(ma)), num::split_2048(&encode(mb)));
    // Lanes: (a mod p, a mod q, b mod p, b mod q).
    let keys = [a.p.lane(), a.q.lane(), b.p.lane(), b.q.lane()];
    let [ba, bb] = blinds;
    // SAFETY: `available()` was true when these keys were made, so the CPU has the features.
    let halves = unsafe {
        let lo = kernel::pack([&sa.0, &sa.0, &sb.0, &sb.0]);
        let hi = kernel::pack([&sa.1, &sa.1, &sb.1, &sb.1]);
        let blind = kernel::Blinding {
            a: kernel::pack([&ba.a[0], &ba.a[1], &bb.a[0], &bb.a[1]]),
            ai: kernel::pack([&ba.ai[0], &ba.ai[1], &bb.ai[0], &bb.ai[1]]),
        };
        kernel::unpack(&kernel::mod_exp(&lo, &hi, [&keys[0], &keys[1], &keys[2], &keys[3]], Some(&blind)))
    };
    // Garner: h = q⁻¹·(s_p − s_q) mod p in the p lanes (below 3p: the vector product of it and
    // q⁻¹·R is below 2p), then s = s_q + q·h. The CRT halves and Garner's terms each reveal a
    // factor of n (gcd(s − s_p, n) = p); all are wiped as they drop.
    let da = num::sub_plus_2p(&halves[0], &halves[1], &a.p.n);
    let db = num::sub_plus_2p(&halves[2], &halves[3], &b.p.n);
    let zero = L52::zero();
    // SAFETY: as above.
    let h = unsafe {
        let d = kernel::pack([&da, &zero, &db, &zero]);
        let c = kernel::pack([&a.qinv_r, &zero, &b.qinv_r, &zero]);
        let n = kernel::pack([&a.p.n, &a.q.n, &b.p.n, &b.q.n]);
        let k0 = kernel::lanes([a.p.k0, a.q.k0, b.p.k0, b.q.k0]);
        kernel::unpack(&kernel::reduce_once(&kernel::mont_mul(&d, &c, &n, &k0), &n))
    };
    [
        num::recombine(&num::from_52(&halves[1]), &a.q64, &num::from_52(&h[0])),
        num::recombine(&num::from_52(&halves[3]), &b.q64, &num::from_52(&h[2])),
    ]
}

/// The signature if aws-lc verifies it; else wiped (a wrong CRT signature reveals a factor).
fn checked(key: &IfmaKey, message: &[u8], mut signature: [u8; 256]) -> Option<[u8; 256]> {
    if key.verify(message, &signature) {
        return Some(signature);
    }
    signature.zeroize();
    None
}

#[cfg(test)]
mod tests;
