//! Benchmark: RS256 signatures on one core, for both engines of `[signing] rsa_engine`: aws-lc
//! one at a time against the AVX-512 IFMA pair signer (`latchkey_domain::oidc::rsa_ifma`), with
//! `openssl speed rsa2048` (one core) beside them. Rounds alternate the three so a drifting
//! machine moves them together; the ratios are medians of the rounds. Every pair signature is
//! also checked against aws-lc's (they are deterministic).
//!
//! Then a timing test of the pair signer in the manner of dudect (Reparaz, Balasch and Verbauwhede,
//! "Dude, is my code constant time?", 2017): signatures of two classes of inputs, interleaved in a
//! random order, are timed with the CPU's time-stamp counter, and Welch's t-test compares the two
//! classes' mean times, on all measurements and on those below each of 100 percentiles (cropping
//! the long tail that interrupts and the machine's other work add), plus a second-order test (the
//! squared distance from the class mean). |t| above 4.5 would mean the time depends on the class:
//! - fixed against random keys and messages: one key (held in as many copies as the random class
//!   has keys, so that both classes' keys sit at as many addresses and are as often in the caches)
//!   and one pair of messages, against keys drawn from a pool of freshly generated ones and random
//!   messages of the same length;
//! - fixed against random messages, with one key.
//!
//! The first test runs twice: as the daemon signs (the vector arithmetic, then aws-lc's check of
//! each signature with the public key) and the arithmetic alone (blinding included, the check
//! left out), since the check's time depends on the public key, which differs between the
//! classes too. aws-lc runs the two tests as a reference, and a control gives both classes the
//! same inputs, so that its |t| shows what noise alone reaches on this machine. The whole bench
//! takes under a minute.
//!
//! Run: `cargo bench -p latchkey-tests --bench signing`. Prints figures; asserts nothing about speed.

use std::process::Command;
use std::time::{Duration, Instant};

const ROUND: Duration = Duration::from_secs(1);
const ROUNDS: usize = 5;
/// How long each timing test measures, for the pair signer and for aws-lc.
const TIMING_PAIRS: Duration = Duration::from_secs(7);
/// How long the A/A control measures (identical inputs in both classes: the test's own noise).
const TIMING_CONTROL: Duration = Duration::from_secs(5);
const TIMING_AWS_LC: Duration = Duration::from_secs(4);
/// Keys in the random class's pool.
const POOL: usize = 12;
/// Length of every message: same length in both classes, so that hashing takes the same time.
const MESSAGE_LEN: usize = 320;

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
    let out = Command::new("openssl").args(["speed", "-seconds", "1", "rsa2048"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("rsa 2048") || l.starts_with("rsa  2048"))?;
    line.split_whitespace().nth(5)?.parse().ok()
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    x86::main();
    #[cfg(not(target_arch = "x86_64"))]
    println!("signing: the pair signer exists on x86-64 only");
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use latchkey_domain::oidc::keys::{SigningKey, generate};
    use latchkey_domain::oidc::rsa_ifma::{IfmaKey, available, pair_arithmetic_for_timing, sign_pair};

    use super::*;

    pub fn main() {
        if !available() {
            println!("signing: this CPU has no AVX-512 IFMA; rsa_engine = \"ifma-pairs\" would sign with aws-lc here");
            return;
        }
        let g = generate(2048).expect("key");
        // The daemon's aws-lc signer (`sign_rs256`), and the same key for the pair signer.
        let key = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).expect("key");
        let ifma = IfmaKey::from_pkcs8(&g.pkcs8).expect("ifma key");
        // What loading a tenant's keys adds with `ifma-pairs`: the key's constants, its public key
        // parsed by aws-lc, a self-test pair (with its first blinding).
        let start = Instant::now();
        for _ in 0..20 {
            std::hint::black_box(IfmaKey::from_pkcs8(&g.pkcs8).expect("ifma key"));
        }
        println!("pair signer: a key prepared in {:.2} ms", start.elapsed().as_secs_f64() * 1000.0 / 20.0);
        throughput(&key, &ifma);
        timing();
    }

    fn throughput(key: &SigningKey, ifma: &IfmaKey) {
        let messages: Vec<Vec<u8>> = (0..64).map(|i| format!("eyJhbGciOiJSUzI1NiJ9.{i:0>300}").into_bytes()).collect();
        let aws = |i: usize| key.sign_rs256(&messages[i % 64]).expect("sign");
        for (i, m) in messages.iter().enumerate().step_by(2) {
            let [a, b] = sign_pair([(ifma, m), (ifma, &messages[i + 1])]);
            assert_eq!(a.map(|s| s.to_vec()), Some(aws(i)));
            assert_eq!(b.map(|s| s.to_vec()), Some(aws(i + 1)));
        }
        println!("RS256 signatures per second on one core ({} s rounds)", ROUND.as_secs());
        println!(
            "| round | openssl speed | aws-lc (rsa_engine = \"aws-lc\") | IFMA pairs (\"ifma-pairs\") | pairs ÷ aws-lc | pairs ÷ openssl |"
        );
        println!("|---|---|---|---|---|---|");
        let (mut vs_aws, mut vs_openssl) = (Vec::new(), Vec::new());
        for round in 1..=ROUNDS {
            let ssl = openssl_one_core();
            let one = rate(1, |i| {
                std::hint::black_box(aws(i));
            });
            let two = rate(2, |i| {
                std::hint::black_box(sign_pair([(ifma, &messages[i % 64]), (ifma, &messages[(i + 1) % 64])]));
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

    /// A small, fast generator for the test's choices (seeded from aws-lc's CSPRNG); the
    /// messages themselves are aws-lc's random bytes.
    struct XorShift(u64);

    impl XorShift {
        fn new() -> XorShift {
            let mut seed = [0u8; 8];
            aws_lc_rs::rand::fill(&mut seed).expect("random");
            XorShift(u64::from_le_bytes(seed) | 1)
        }

        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn random_message() -> Vec<u8> {
        let mut m = vec![0u8; MESSAGE_LEN];
        aws_lc_rs::rand::fill(&mut m).expect("random");
        m
    }

    /// Welch's t-test on two classes, with running means and variances (Welford), as dudect's.
    #[derive(Default, Clone)]
    struct TTest {
        n: [f64; 2],
        mean: [f64; 2],
        m2: [f64; 2],
    }

    impl TTest {
        fn push(&mut self, x: f64, class: usize) {
            self.n[class] += 1.0;
            let delta = x - self.mean[class];
            self.mean[class] += delta / self.n[class];
            self.m2[class] += delta * (x - self.mean[class]);
        }

        fn t(&self) -> f64 {
            let var = |c: usize| self.m2[c] / (self.n[c] - 1.0);
            (self.mean[0] - self.mean[1]) / (var(0) / self.n[0] + var(1) / self.n[1]).sqrt()
        }

        fn fewest(&self) -> f64 {
            self.n[0].min(self.n[1])
        }
    }

    const PERCENTILES: usize = 100;
    /// Tests with fewer measurements in a class than this are not reported (dudect's "enough
    /// measurements", scaled to the time this bench has).
    const ENOUGH: f64 = 1000.0;

    /// dudect's statistics: the t-test on everything, on the measurements below each percentile
    /// 1 − 0.5^(10·(i+1)/100) of the first batch (which only sets them), and second order.
    struct Dudect {
        crops: Vec<u64>,
        tests: Vec<TTest>,
        second: TTest,
        measurements: usize,
    }

    impl Dudect {
        fn new(first: &mut [u64]) -> Dudect {
            first.sort_unstable();
            let crops = (0..PERCENTILES)
                .map(|i| {
                    let which = 1.0 - 0.5f64.powf(10.0 * (i + 1) as f64 / PERCENTILES as f64);
                    first[((first.len() as f64 * which) as usize).min(first.len() - 1)]
                })
                .collect();
            Dudect { crops, tests: vec![TTest::default(); PERCENTILES + 1], second: TTest::default(), measurements: 0 }
        }

        fn push(&mut self, cycles: u64, class: usize) {
            self.measurements += 1;
            let x = cycles as f64;
            self.tests[0].push(x, class);
            for (crop, test) in self.crops.iter().zip(&mut self.tests[1..]) {
                if cycles < *crop {
                    test.push(x, class);
                }
            }
            // Second order once the means have settled (dudect: after 10,000; here a tenth).
            if self.tests[0].fewest() > ENOUGH {
                let centred = x - self.tests[0].mean[class];
                self.second.push(centred * centred, class);
            }
        }

        fn report(&self, what: &str) {
            let mut worst = (0.0f64, "all measurements".to_owned());
            for (i, test) in self.tests.iter().enumerate().filter(|(_, t)| t.fewest() >= ENOUGH) {
                if test.t().abs() > worst.0.abs() {
                    let crop = if i == 0 { "all measurements".to_owned() } else { format!("below crop {i}") };
                    worst = (test.t(), crop);
                }
            }
            if self.second.fewest() >= ENOUGH && self.second.t().abs() > worst.0.abs() {
                worst = (self.second.t(), "second order".to_owned());
            }
            let verdict = if worst.0.abs() < 4.5 { "no leak detected (|t| < 4.5)" } else { "LEAK? |t| ≥ 4.5" };
            let m = &self.tests[0].mean;
            println!(
                "| {what} | {} | {:.0} / {:.0} | {:+.2} | {:+.2} ({}) | {verdict} |",
                self.measurements,
                m[0],
                m[1],
                self.tests[0].t(),
                worst.0,
                worst.1
            );
        }
    }

    /// Time-stamp counter, fenced so that the work measured neither starts early nor ends late.
    fn ticks() -> u64 {
        use std::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: SSE2 (lfence) and rdtsc are part of x86-64.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }

    /// One class's input: which keys (in the pool of copies of the fixed key, or in the pool of
    /// random keys) and messages.
    struct Input {
        class: usize,
        random_keys: bool,
        keys: [usize; 2],
        messages: [Vec<u8>; 2],
    }

    /// Measures `sign(input)` for random-order inputs of the two classes until `budget` is spent.
    fn measure(budget: Duration, random_keys: bool, mut sign: impl FnMut(&Input)) -> Dudect {
        let mut rng = XorShift::new();
        let fixed = [random_message(), random_message()];
        let batch = |rng: &mut XorShift| -> Vec<Input> {
            (0..500)
                .map(|_| {
                    let class = (rng.next() & 1) as usize;
                    let keys = [rng.below(POOL), rng.below(POOL)];
                    match class {
                        0 => Input { class, random_keys: false, keys, messages: fixed.clone() },
                        _ => Input { class, random_keys, keys, messages: [random_message(), random_message()] },
                    }
                })
                .collect()
        };
        let run = |inputs: &[Input], sign: &mut dyn FnMut(&Input)| -> Vec<(u64, usize)> {
            inputs
                .iter()
                .map(|input| {
                    let start = ticks();
                    sign(input);
                    (ticks().wrapping_sub(start), input.class)
                })
                .collect()
        };
        // The first batch sets the percentiles (and warms up), as in dudect.
        let mut first: Vec<u64> = run(&batch(&mut rng), &mut sign).into_iter().map(|(t, _)| t).collect();
        let mut stats = Dudect::new(&mut first);
        let start = Instant::now();
        while start.elapsed() < budget {
            let inputs = batch(&mut rng);
            for (cycles, class) in run(&inputs, &mut sign) {
                stats.push(cycles, class);
            }
        }
        stats
    }

    fn timing() {
        println!();
        println!(
            "Timing (dudect-style fixed against random, Welch's t-test; time-stamp counter ticks per call: a pair \
             of signatures for ifma-pairs, one signature for aws-lc; {POOL} copies of the fixed key against {POOL} \
             random keys; messages of {MESSAGE_LEN} bytes)"
        );
        let started = Instant::now();
        // The fixed class signs with copies of one key, the random class with as many different
        // keys, picked the same way: both classes' keys live at as many addresses and are as
        // often in the caches, so that only the keys' values differ between the classes.
        let prepare = |g: &latchkey_domain::oidc::keys::GeneratedKey| {
            (SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).expect("key"), IfmaKey::from_pkcs8(&g.pkcs8).expect("key"))
        };
        let one = generate(2048).expect("key");
        let fixed: Vec<(SigningKey, IfmaKey)> = (0..POOL).map(|_| prepare(&one)).collect();
        let random: Vec<(SigningKey, IfmaKey)> = (0..POOL).map(|_| prepare(&generate(2048).expect("key"))).collect();
        println!("(keys generated in {:.1} s)", started.elapsed().as_secs_f64());
        println!("| test | measurements | mean ticks fixed / random | t (all) | largest \\|t\\| | verdict |");
        println!("|---|---|---|---|---|---|");
        let pool = |input: &Input| if input.random_keys { &random } else { &fixed };
        let pairs = |input: &Input| {
            let [a, b] = input.keys.map(|i| &pool(input)[i].1);
            let [x, y] = sign_pair([(a, &input.messages[0]), (b, &input.messages[1])]);
            assert!(x.is_some() && y.is_some(), "a pair signature failed its check");
        };
        let arithmetic = |input: &Input| {
            let [a, b] = input.keys.map(|i| &pool(input)[i].1);
            pair_arithmetic_for_timing([(a, &input.messages[0]), (b, &input.messages[1])]);
        };
        let aws = |input: &Input| {
            std::hint::black_box(pool(input)[input.keys[0]].0.sign_rs256(&input.messages[0]).expect("sign"));
        };
        measure(TIMING_PAIRS, true, pairs).report("ifma-pairs: fixed vs random keys and messages");
        measure(TIMING_PAIRS, false, pairs).report("ifma-pairs: fixed key, fixed vs random messages");
        measure(TIMING_PAIRS, true, arithmetic)
            .report("ifma-pairs without aws-lc's check: fixed vs random keys and messages");
        measure(TIMING_AWS_LC, true, aws).report("aws-lc: fixed vs random keys and messages");
        measure(TIMING_AWS_LC, false, aws).report("aws-lc: fixed key, fixed vs random messages");
        let control = |input: &Input| {
            let [a, b] = input.keys.map(|i| &fixed[i].1);
            let [x, y] = sign_pair([(a, b"the same message in both classes"), (b, b"and the same second one")]);
            assert!(x.is_some() && y.is_some(), "a pair signature failed its check");
        };
        measure(TIMING_CONTROL, false, control).report("control, ifma-pairs: identical inputs in both classes");
        println!("(timing tests took {:.0} s)", started.elapsed().as_secs_f64());
    }
}
