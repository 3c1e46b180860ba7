//! RS256 signatures two at a time with AVX-512 IFMA, for CPUs that have it (Intel since Ice
//! Lake, AMD since Zen 4). An RSA-2048 signature is two 1,024-bit exponentiations (the CRT halves,
//! mod p and mod q); this signs two tokens at once as four independent exponentiations, one per
//! lane of a vector register, which on such CPUs is about 1.4× the throughput of signing them one
//! after another with aws-lc (measured side by side: `cargo bench --bench signing`). It is the
//! "multi-buffer" technique of Intel's crypto_mb, written here for this one key size.
//!
//! Safety of the keys: the arithmetic runs the same instructions whatever the key and message
//! (no branch or memory address depends on them), and every signature is checked against the
//! public key with aws-lc before it leaves ([`sign_pair`]): a wrong CRT signature would reveal
//! the key's factors, so one that fails its check is never returned (`super::signer` then signs
//! with aws-lc and logs an error). Keys of another size, or whose primes are not both exactly 1,024 bits, use aws-lc only.

#![cfg(target_arch = "x86_64")]

mod kernel;
mod num;

use aws_lc_rs::signature::{RSA_PKCS1_2048_8192_SHA256, RsaPublicKeyComponents};
use zeroize::Zeroize;

use kernel::{LIMBS, LaneKey};
use num::{L52, U1024};

/// Whether this CPU has the instructions (the standard library caches what it detects).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512ifma")
}

/// The Garner step's lanes for q multiply by zero.
const ZERO: L52 = [0; LIMBS];

/// One CRT half: a prime with its Montgomery constants and its exponent.
struct Half {
    n: L52,
    k0: u64,
    rr: L52,
    rrr: L52,
    exp: U1024,
}

impl Half {
    fn new(prime: &U1024, exp: &U1024) -> Half {
        // R = 2^1040: R² and R³ mod the prime by doubling 1 (constant time, once per key).
        let mut one = [0u64; 16];
        one[0] = 1;
        Half {
            n: num::l52(prime),
            k0: num::neg_inv_52(prime[0]),
            rr: num::l52(&num::shl_mod(&one, 2 * 1040, prime)),
            rrr: num::l52(&num::shl_mod(&one, 3 * 1040, prime)),
            exp: *exp,
        }
    }

    fn lane(&self) -> LaneKey<'_> {
        LaneKey { n: &self.n, k0: self.k0, rr: &self.rr, rrr: &self.rrr, exp: &self.exp }
    }
}

/// An RSA-2048 private key prepared for the vector arithmetic.
pub struct IfmaKey {
    p: Half,
    q: Half,
    /// q as 64-bit limbs, for the recombination.
    q64: U1024,
    /// q⁻¹·R mod p (Montgomery form of the CRT coefficient).
    qinv_r: L52,
    public_n: Vec<u8>,
    public_e: Vec<u8>,
}

impl std::fmt::Debug for IfmaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IfmaKey")
    }
}

impl Drop for IfmaKey {
    fn drop(&mut self) {
        for h in [&mut self.p, &mut self.q] {
            for x in [&mut h.n, &mut h.rr, &mut h.rrr] {
                x.zeroize();
            }
            h.exp.zeroize();
        }
        self.q64.zeroize();
        self.qinv_r.zeroize();
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
        let (mut p, mut q) = (int(&k.prime1)?, int(&k.prime2)?);
        let (mut dp, mut dq, mut qinv) = (int(&k.exponent1)?, int(&k.exponent2)?, int(&k.coefficient)?);
        let key = IfmaKey {
            p: Half::new(&p, &dp),
            q: Half::new(&q, &dq),
            q64: q,
            qinv_r: num::l52(&num::shl_mod(&qinv, 1040, &p)),
            public_n: k.modulus.as_bytes().to_vec(),
            public_e: k.public_exponent.as_bytes().to_vec(),
        };
        for x in [&mut p, &mut q, &mut dp, &mut dq, &mut qinv] {
            x.zeroize();
        }
        // A key this code gets wrong must never sign: try it once.
        let probe = sign_pair([(&key, b"latchkey: key self-test".as_slice()), (&key, b"second".as_slice())]);
        probe.iter().all(Option::is_some).then_some(key)
    }

    fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        let public = RsaPublicKeyComponents { n: &self.public_n, e: &self.public_e };
        public.verify(&RSA_PKCS1_2048_8192_SHA256, message, signature).is_ok()
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
    em[256 - 32..].copy_from_slice(&crate::crypto::sha256(message));
    em
}

/// RSASSA-PKCS1-v1_5 SHA-256 signatures of two messages (under the same or different keys), each
/// checked with the public key; `None` for one that failed its check (never expected).
pub fn sign_pair(jobs: [(&IfmaKey, &[u8]); 2]) -> [Option<[u8; 256]>; 2] {
    let encoded = jobs.map(|(_, m)| encode(m));
    let split = encoded.each_ref().map(num::split_2048);
    let [(a, _), (b, _)] = jobs;
    // Lanes: (a mod p, a mod q, b mod p, b mod q).
    let keys = [a.p.lane(), a.q.lane(), b.p.lane(), b.q.lane()];
    let [sa, sb] = [&split[0], &split[1]];
    // SAFETY: `available()` was true when these keys were made, so the CPU has the features.
    let mut halves = unsafe {
        let lo = kernel::pack([&sa.0, &sa.0, &sb.0, &sb.0]);
        let hi = kernel::pack([&sa.1, &sa.1, &sb.1, &sb.1]);
        let mut r = kernel::mod_exp(&lo, &hi, [&keys[0], &keys[1], &keys[2], &keys[3]]);
        let out = kernel::unpack(&r);
        r.0.zeroize();
        out
    };
    // Garner: h = q⁻¹·(s_p − s_q) mod p in the p lanes (below 3p: the vector product of it and
    // q⁻¹·R is below 2p), then s = s_q + q·h.
    let mut da = num::sub_plus_2p(&halves[0], &halves[1], &a.p.n);
    let mut db = num::sub_plus_2p(&halves[2], &halves[3], &b.p.n);
    let mut h = unsafe {
        let mut d = kernel::pack([&da, &ZERO, &db, &ZERO]);
        let c = kernel::pack([&a.qinv_r, &ZERO, &b.qinv_r, &ZERO]);
        let n = kernel::pack([&a.p.n, &a.q.n, &b.p.n, &b.q.n]);
        let k0 = kernel::lanes([a.p.k0, a.q.k0, b.p.k0, b.q.k0]);
        let mut product = kernel::mont_mul(&d, &c, &n, k0);
        let mut reduced = kernel::reduce_once(&product, &n);
        let out = kernel::unpack(&reduced);
        for v in [&mut d, &mut product, &mut reduced] {
            v.0.zeroize();
        }
        out
    };
    let mut parts = [num::from_52(&halves[1]), num::from_52(&h[0]), num::from_52(&halves[3]), num::from_52(&h[2])];
    let sig_a = num::recombine(&parts[0], &a.q64, &parts[1]);
    let sig_b = num::recombine(&parts[2], &b.q64, &parts[3]);
    // The CRT halves and Garner's terms each reveal a factor of n (gcd(s − s_p, n) = p).
    for x in halves.iter_mut().chain(h.iter_mut()).chain([&mut da, &mut db]) {
        x.zeroize();
    }
    parts.zeroize();
    let [(_, ma), (_, mb)] = jobs;
    [a.verify(ma, &sig_a).then_some(sig_a), b.verify(mb, &sig_b).then_some(sig_b)]
}

#[cfg(test)]
mod tests;
