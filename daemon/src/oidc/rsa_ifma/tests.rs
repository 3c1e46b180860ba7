use super::*;
use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{KeyPair, KeySize};

fn key() -> (KeyPair, Vec<u8>) {
    let pair = KeyPair::generate(KeySize::Rsa2048).unwrap();
    let der = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der<'static>>::as_der(&pair).unwrap();
    (pair, der.as_ref().to_vec())
}

fn aws_lc(pair: &KeyPair, message: &[u8]) -> Vec<u8> {
    let mut sig = vec![0u8; 256];
    let rng = aws_lc_rs::rand::SystemRandom::new();
    pair.sign(&aws_lc_rs::signature::RSA_PKCS1_SHA256, &rng, message, &mut sig).unwrap();
    sig
}

/// PKCS#1 v1.5 signatures are deterministic: the vector arithmetic must give aws-lc's bytes.
#[test]
fn signatures_are_aws_lc_s_bytes_for_many_keys_and_messages() {
    if !available() {
        eprintln!("no AVX-512 IFMA on this CPU: nothing to compare");
        return;
    }
    let keys: Vec<_> = (0..6).map(|_| key()).collect();
    let ifma: Vec<_> = keys.iter().map(|(_, der)| IfmaKey::from_pkcs8(der).unwrap()).collect();
    for i in 0..60usize {
        let (a, b) = (i % keys.len(), (i * 7 + 1) % keys.len());
        let ma = format!("message {i} {}", "x".repeat(i * 13));
        let mb = vec![i as u8; i * 5];
        let [sa, sb] = sign_pair([(&ifma[a], ma.as_bytes()), (&ifma[b], &mb)]);
        assert_eq!(sa.unwrap().to_vec(), aws_lc(&keys[a].0, ma.as_bytes()), "pair {i}, first");
        assert_eq!(sb.unwrap().to_vec(), aws_lc(&keys[b].0, &mb), "pair {i}, second");
    }
}

#[test]
fn other_key_sizes_and_garbage_are_left_to_aws_lc() {
    let pair = KeyPair::generate(KeySize::Rsa3072).unwrap();
    let der = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der<'static>>::as_der(&pair).unwrap();
    assert!(IfmaKey::from_pkcs8(der.as_ref()).is_none());
    assert!(IfmaKey::from_pkcs8(b"\x30\x03\x02\x01\x00").is_none());
    assert!(IfmaKey::from_pkcs8(&[]).is_none());
    let (_, der) = key();
    for cut in [1, 10, 100, der.len() - 1] {
        assert!(IfmaKey::from_pkcs8(&der[..cut]).is_none(), "cut at {cut}");
    }
}
