//! Benchmark: RS256 signatures on one core, aws-lc one at a time against the AVX-512 IFMA pair
//! signer (`latchkeyd::oidc::rsa_ifma`), with `openssl speed rsa2048` (one core) beside them.
//! Rounds alternate the three so a drifting machine moves them together; the ratios are medians of
//! the rounds. Every pair signature is also checked against aws-lc's (they are deterministic).
//!
//! Run: `cargo bench -p latchkey-tests --bench signing`. Prints figures; asserts nothing about speed.

use std::process::Command;
use std::time::{Duration, Instant};

const ROUND: Duration = Duration::from_secs(2);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Signatures per second over about `ROUND`, `per_call` signatures per call of `f`.
fn rate(per_call: usize, mut f: impl FnMut(usize)) -> f64 {
    let start = Instant::now();
    let mut calls = 0;
    while start.elapsed() < ROUND {
        f(calls);
        calls += 1;
    }
    (calls * per_call) as f64 / start.elapsed().as_secs_f64()
}

fn openssl_one_core() -> Option<f64> {
    let out = Command::new("openssl").args(["speed", "-seconds", "2", "rsa2048"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("rsa 2048") || l.starts_with("rsa  2048"))?;
    line.split_whitespace().nth(5)?.parse().ok()
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    {
        use latchkeyd::oidc::keys::{SigningKey, generate};
        use latchkeyd::oidc::rsa_ifma::{IfmaKey, available, sign_pair};
        if !available() {
            println!("signing: this CPU has no AVX-512 IFMA; the pair signer is not used here");
            return;
        }
        let g = generate(2048).expect("key");
        // The daemon's aws-lc signer (`sign_rs256`), and the same key for the pair signer.
        let key = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).expect("key");
        let ifma = IfmaKey::from_pkcs8(&g.pkcs8).expect("ifma key");
        let messages: Vec<Vec<u8>> = (0..64).map(|i| format!("eyJhbGciOiJSUzI1NiJ9.{i:0>300}").into_bytes()).collect();
        let aws = |i: usize| key.sign_rs256(&messages[i % 64]).expect("sign");
        for (i, m) in messages.iter().enumerate().step_by(2) {
            let [a, b] = sign_pair([(&ifma, m), (&ifma, &messages[i + 1])]);
            assert_eq!(a.map(|s| s.to_vec()), Some(aws(i)));
            assert_eq!(b.map(|s| s.to_vec()), Some(aws(i + 1)));
        }
        println!("RS256 signatures per second on one core ({} s rounds)", ROUND.as_secs());
        println!("| round | openssl speed | aws-lc one at a time | IFMA pairs | pairs ÷ aws-lc | pairs ÷ openssl |");
        println!("|---|---|---|---|---|---|");
        let (mut vs_aws, mut vs_openssl) = (Vec::new(), Vec::new());
        for round in 1..=5 {
            let ssl = openssl_one_core();
            let one = rate(1, |i| {
                std::hint::black_box(aws(i));
            });
            let two = rate(2, |i| {
                std::hint::black_box(sign_pair([(&ifma, &messages[i % 64]), (&ifma, &messages[(i + 1) % 64])]));
            });
            vs_aws.push(two / one);
            let ssl_text = ssl.map_or("-".to_owned(), |s| format!("{s:.0}"));
            let ratio_ssl = ssl.map_or("-".to_owned(), |s| {
                vs_openssl.push(two / s);
                format!("{:.2}", two / s)
            });
            println!("| {round} | {ssl_text} | {one:.0} | {two:.0} | {:.2} | {ratio_ssl} |", two / one);
        }
        let ssl_median = if vs_openssl.is_empty() { "-".to_owned() } else { format!("{:.2}", median(vs_openssl)) };
        println!("median: pairs ÷ aws-lc {:.2}, pairs ÷ openssl {ssl_median}", median(vs_aws));
    }
}
