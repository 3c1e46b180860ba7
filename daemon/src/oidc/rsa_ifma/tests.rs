use super::*;
use crate::oidc::keys::{SigningKey, generate};

/// A new key: its PKCS#8 DER and the daemon's aws-lc signer for it.
fn key(bits: u32) -> (SigningKey, Vec<u8>) {
    let g = generate(bits).unwrap();
    (SigningKey::from_pkcs8(&g.kid, bits, &g.pkcs8).unwrap(), g.pkcs8)
}

/// PKCS#1 v1.5 signatures are deterministic: the vector arithmetic must give aws-lc's bytes.
#[test]
fn signatures_are_aws_lc_s_bytes_for_many_keys_and_messages() {
    if !available() {
        eprintln!("no AVX-512 IFMA on this CPU: nothing to compare");
        return;
    }
    let keys: Vec<_> = (0..6).map(|_| key(2048)).collect();
    let ifma: Vec<_> = keys.iter().map(|(_, der)| IfmaKey::from_pkcs8(der).unwrap()).collect();
    for i in 0..60usize {
        let (a, b) = (i % keys.len(), (i * 7 + 1) % keys.len());
        let ma = format!("message {i} {}", "x".repeat(i * 13));
        let mb = vec![i as u8; i * 5];
        let [sa, sb] = sign_pair([(&ifma[a], ma.as_bytes()), (&ifma[b], &mb)]);
        assert_eq!(sa.unwrap().to_vec(), keys[a].0.sign_rs256(ma.as_bytes()).unwrap(), "pair {i}, first");
        assert_eq!(sb.unwrap().to_vec(), keys[b].0.sign_rs256(&mb).unwrap(), "pair {i}, second");
    }
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

/// The exponentiation alone against num-bigint, over odd 1,024-bit moduli (prime or not) and
/// inputs that PKCS#1 padding never produces: 0, 1, n − 1, n, multiples of n, all ones.
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
    for round in 0..8 {
        let mut moduli = Vec::new();
        let mut halves = Vec::new();
        for _ in 0..4 {
            let mut n = random(128);
            n[0] |= 0x80;
            n[127] |= 1;
            let e = random(128);
            let (n64, e64) = (num::u1024_from_be(&n).unwrap(), num::u1024_from_be(&e).unwrap());
            halves.push(Half::new(&n64, &e64));
            moduli.push((BigUint::from_bytes_be(&n), BigUint::from_bytes_be(&e)));
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
            kernel::unpack(&kernel::mod_exp(&lo, &hi, [&lanes[0], &lanes[1], &lanes[2], &lanes[3]]))
        };
        for lane in 0..4 {
            let (n, e) = &moduli[lane];
            let want = inputs[lane].modpow(e, n);
            let got = num::from_52(&out[lane]);
            let got = BigUint::from_bytes_le(&got.iter().flat_map(|l| l.to_le_bytes()).collect::<Vec<_>>());
            assert_eq!(got, want, "round {round}, lane {lane}");
        }
    }
}
