use super::*;
use aws_lc_rs::encoding::{AsDer, Pkcs8V1Der};
use aws_lc_rs::rsa::{KeyPair, KeySize};

/// aws-lc's signer of a key, to compare with.
struct Reference(KeyPair);

impl Reference {
    fn sign_rs256(&self, message: &[u8]) -> Result<Vec<u8>, aws_lc_rs::error::Unspecified> {
        let mut sig = vec![0u8; self.0.public_modulus_len()];
        let rng = aws_lc_rs::rand::SystemRandom::new();
        self.0.sign(&aws_lc_rs::signature::RSA_PKCS1_SHA256, &rng, message, &mut sig)?;
        Ok(sig)
    }
}

/// A new key: its PKCS#8 DER and aws-lc's signer for it.
fn key(bits: u32) -> (Reference, Vec<u8>) {
    let size = match bits {
        2048 => KeySize::Rsa2048,
        3072 => KeySize::Rsa3072,
        _ => KeySize::Rsa4096,
    };
    let pair = KeyPair::generate(size).unwrap();
    let der = AsDer::<Pkcs8V1Der<'static>>::as_der(&pair).unwrap().as_ref().to_vec();
    (Reference(pair), der)
}

/// PKCS#1 v1.5 signatures are deterministic: the vector arithmetic, blinded, must give aws-lc's bytes.
#[test]
fn signatures_are_aws_lc_s_bytes_for_many_keys_and_messages() {
    if !available() {
        eprintln!("no AVX-512 IFMA on this CPU: nothing to compare");
        return;
    }
    let keys: Vec<_> = (0..6).map(|_| key(2048)).collect();
    let ifma: Vec<_> = keys.iter().map(|(_, der)| IfmaKey::from_pkcs8(der).unwrap()).collect();
    // 60 pairs: each key's blinding is squared many times and made fresh at least once.
    for i in 0..60usize {
        let (a, b) = (i % keys.len(), (i * 7 + 1) % keys.len());
        let ma = format!("message {i} {}", "x".repeat(i * 13));
        let mb = vec![i as u8; i * 5];
        let [sa, sb] = sign_pair([(&ifma[a], ma.as_bytes()), (&ifma[b], &mb)]);
        assert_eq!(sa.unwrap().to_vec(), keys[a].0.sign_rs256(ma.as_bytes()).unwrap(), "pair {i}, first");
        assert_eq!(sb.unwrap().to_vec(), keys[b].0.sign_rs256(&mb).unwrap(), "pair {i}, second");
    }
}

/// A copy of a blinding pair, mixed from two (a test's own; the signer never copies one).
fn mixed(a_from: &BlindPair, ai_from: &BlindPair) -> BlindPair {
    let copy = |x: &L52| L52(x.0);
    BlindPair { a: [copy(&a_from.a[0]), copy(&a_from.a[1])], ai: [copy(&ai_from.ai[0]), copy(&ai_from.ai[1])] }
}

/// The blinding is in use: two different blinding pairs give different bases to the
/// exponentiations and the same signature, aws-lc's; a pair whose r^e and r⁻¹ do not match (which
/// would change nothing if the blinding were skipped) gives a wrong signature, which the check
/// after signing refuses.
#[test]
fn blinding_changes_the_base_and_not_the_signature() {
    if !available() {
        return;
    }
    let (aws, der) = key(2048);
    let k = IfmaKey::from_pkcs8(&der).unwrap();
    let [one, two] = k.fresh_blindings().unwrap();
    assert_ne!(one.a[0].0, two.a[0].0, "fresh randomness each time");
    assert_ne!(one.ai[1].0, two.ai[1].0);
    let m = b"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZGEifQ".as_slice();
    let want = aws.sign_rs256(m).unwrap();
    // The base the p half's exponent meets: x·r^e mod p, in Montgomery form.
    let base = |b: &BlindPair| {
        let (lo, hi) = num::split_2048(&encode(m));
        // SAFETY: `available()` above.
        unsafe {
            let n = kernel::pack([&k.p.n, &k.p.n, &k.p.n, &k.p.n]);
            let k0 = kernel::lanes([k.p.k0; 4]);
            let rr = kernel::pack([&k.p.rr, &k.p.rr, &k.p.rr, &k.p.rr]);
            let rrr = kernel::pack([&k.p.rrr, &k.p.rrr, &k.p.rrr, &k.p.rrr]);
            let (lo, hi) = (kernel::pack([&lo, &lo, &lo, &lo]), kernel::pack([&hi, &hi, &hi, &hi]));
            let x = kernel::add(&kernel::mont_mul(&lo, &rr, &n, &k0), &kernel::mont_mul(&hi, &rrr, &n, &k0));
            let a = kernel::pack([&b.a[0], &b.a[0], &b.a[0], &b.a[0]]);
            let [v, ..] = kernel::unpack(&kernel::reduce_once(&kernel::mont_mul(&x, &a, &n, &k0), &n));
            v.0
        }
    };
    assert_ne!(base(&one), base(&two), "the exponentiation's base differs with the blinding");
    for b in [&one, &two] {
        let [s1, s2] = sign_pair_blinded([(&k, m), (&k, m)], [b, b]);
        assert_eq!(s1.unwrap().to_vec(), want);
        assert_eq!(s2.unwrap().to_vec(), want);
    }
    let wrong = mixed(&one, &two);
    let [s1, s2] = sign_pair_blinded([(&k, m), (&k, m)], [&wrong, &one]);
    assert!(s1.is_none(), "mismatched blinding values must spoil the signature, and the check refuse it");
    assert_eq!(s2.unwrap().to_vec(), want, "the other lane is not affected");
}

/// Each signature takes the key's pair and leaves its square; after `FRESH_EVERY` uses a fresh
/// pair from new randomness (not the square) comes.
#[test]
fn blinding_is_squared_after_each_use_and_fresh_every_32() {
    if !available() {
        return;
    }
    let (_, der) = key(2048);
    let k = IfmaKey::from_pkcs8(&der).unwrap();
    // Use it until a fresh pair has just been handed out: the next ones are its squares.
    let mut previous = k.next_blinding().unwrap();
    while k.blinder.uses() != Some(1) {
        previous = k.next_blinding().unwrap();
    }
    for use_ in 2..=blinding::FRESH_EVERY {
        let next = k.next_blinding().unwrap();
        let squared = k.squared(&previous);
        assert_eq!((next.a[0].0, next.ai[1].0), (squared.a[0].0, squared.ai[1].0), "use {use_}: the square");
        previous = next;
    }
    let fresh = k.next_blinding().unwrap();
    assert_ne!(fresh.a[0].0, k.squared(&previous).a[0].0, "after {} uses, a fresh pair", blinding::FRESH_EVERY);
}

#[test]
fn other_key_sizes_and_garbage_are_left_to_aws_lc() {
    let (_, der) = key(3072);
    assert!(IfmaKey::from_pkcs8(&der).is_none());
    assert!(IfmaKey::from_pkcs8(b"\x30\x03\x02\x01\x00").is_none());
    assert!(IfmaKey::from_pkcs8(&[]).is_none());
    let (_, der) = key(2048);
    for cut in [1, 10, 100, der.len() - 1] {
        assert!(IfmaKey::from_pkcs8(&der[..cut]).is_none(), "cut at {cut}");
    }
}

/// The exponentiation alone (unblinded) against num-bigint, over odd 1,024-bit moduli (prime or
/// not) and inputs that PKCS#1 padding never produces: 0, 1, n − 1, n, multiples of n, all ones.
#[test]
fn exponentiation_matches_num_bigint_at_the_edges() {
    use num_bigint::BigUint;
    if !available() {
        return;
    }
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = |bytes: usize| -> Vec<u8> {
        (0..bytes)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect()
    };
    let e = num::u1024_from_be(&[1, 0, 1]).unwrap();
    for round in 0..8 {
        let mut moduli = Vec::new();
        let mut halves = Vec::new();
        for _ in 0..4 {
            let mut n = random(128);
            n[0] |= 0x80;
            n[127] |= 1;
            let exp = random(128);
            let (n64, e64) = (num::u1024_from_be(&n).unwrap(), num::u1024_from_be(&exp).unwrap());
            halves.push(Half::new(&n64, &e64, &e));
            moduli.push((BigUint::from_bytes_be(&n), BigUint::from_bytes_be(&exp)));
        }
        let inputs: Vec<BigUint> = (0..4)
            .map(|lane| {
                let n = &moduli[lane].0;
                match (round * 4 + lane) % 8 {
                    0 => BigUint::from(0u8),
                    1 => BigUint::from(1u8),
                    2 => n - 1u8,
                    3 => n.clone(),
                    4 => n * BigUint::from_bytes_be(&random(120)),
                    5 => BigUint::from_bytes_be(&[0xff; 256]),
                    _ => BigUint::from_bytes_be(&random(256)),
                }
            })
            .collect();
        let split: Vec<_> = inputs
            .iter()
            .map(|x| {
                let mut bytes = [0u8; 256];
                let be = x.to_bytes_be();
                bytes[256 - be.len()..].copy_from_slice(&be);
                num::split_2048(&bytes)
            })
            .collect();
        let lanes: Vec<_> = halves.iter().map(Half::lane).collect();
        // SAFETY: `available()` above.
        let out = unsafe {
            let lo = kernel::pack([&split[0].0, &split[1].0, &split[2].0, &split[3].0]);
            let hi = kernel::pack([&split[0].1, &split[1].1, &split[2].1, &split[3].1]);
            kernel::unpack(&kernel::mod_exp(&lo, &hi, [&lanes[0], &lanes[1], &lanes[2], &lanes[3]], None))
        };
        for lane in 0..4 {
            let (n, e) = &moduli[lane];
            let want = inputs[lane].modpow(e, n);
            let got = num::from_52(&out[lane]);
            let got = BigUint::from_bytes_le(&got.0.iter().flat_map(|l| l.to_le_bytes()).collect::<Vec<_>>());
            assert_eq!(got, want, "round {round}, lane {lane}");
        }
    }
}
