//! The machine's ceiling measured beside a bench phase, interleaved with it. This shared
//! machine's speed drifts within one `bench/run` (`openssl speed -multi 2 rsa2048` measured 4,710
//! and then 7,889 signs per second ten minutes apart in one run), so a ratio against a ceiling
//! taken minutes earlier says more about the machine than about Latchkey. The phase runs in
//! rounds with the ceiling measured before the first round and after each; each round's rate is
//! divided by the mean of the ceilings on either side of it, and the median of those ratios is
//! the phase's ratio.
#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

use crate::meter::Meter;
use crate::support::TestDaemon;

/// What `openssl speed` is asked for.
#[derive(Clone, Copy)]
pub enum Ceiling {
    /// RSA-2048 signatures per second on every core (`-multi`): the token endpoint's limit.
    RsaSignsAllCores,
    /// P-256 verifications per second on one core: the sign-in ceremony's reference.
    P256VerifiesOneCore,
}

impl Ceiling {
    fn label(self) -> String {
        match self {
            Ceiling::RsaSignsAllCores => format!("RSA-2048 signs on {} cores", cores()),
            Ceiling::P256VerifiesOneCore => "P-256 verifications on 1 core".into(),
        }
    }

    /// One one-second `openssl speed` run; `None` without openssl or with output it cannot read.
    pub fn measure(self) -> Option<f64> {
        let cores = cores().to_string();
        let args: Vec<&str> = match self {
            Ceiling::RsaSignsAllCores => vec!["speed", "-multi", &cores, "-seconds", "1", "rsa2048"],
            Ceiling::P256VerifiesOneCore => vec!["speed", "-seconds", "1", "ecdsap256"],
        };
        let out = Command::new("openssl").args(&args).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        // "rsa 2048 bits 0.000135s 0.000009s 7413.7 115924.0": signs/s is the sixth field;
        // " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  39580.5  16964.7": verifies/s the eighth.
        let (prefix, field) = match self {
            Ceiling::RsaSignsAllCores => ("rsa 2048 bits", 5),
            Ceiling::P256VerifiesOneCore => ("256 bits ecdsa (nistp256)", 7),
        };
        let line = text.lines().find(|l| l.trim_start().starts_with(prefix))?;
        line.split_whitespace().nth(field)?.parse().ok()
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// One phase run in rounds, and the ceilings and round rates measured around them.
pub struct Rounds {
    ceiling: Ceiling,
    rounds: usize,
    ceilings: Vec<Option<f64>>,
    rates: Vec<f64>,
}

impl Rounds {
    /// A phase of `rounds` rounds; with one, nothing is measured beside it.
    pub fn new(ceiling: Ceiling, rounds: usize) -> Rounds {
        Rounds { ceiling, rounds, ceilings: Vec::new(), rates: Vec::new() }
    }

    /// Runs `round(i)` for each round (it returns its requests' durations), with the ceiling
    /// measured before the first round and after each, outside `meter`'s count. Returns every
    /// duration and the rounds' wall time, the ceilings' seconds left out.
    pub fn run(
        &mut self,
        meter: &mut Meter,
        d: &TestDaemon,
        mut round: impl FnMut(usize) -> Vec<Duration>,
    ) -> (Vec<Duration>, Duration) {
        let interleaved = self.rounds > 1;
        let ceiling = self.ceiling;
        if interleaved {
            self.ceilings.push(meter.exclude(d, || ceiling.measure()));
        }
        let (mut samples, mut wall) = (Vec::new(), Duration::ZERO);
        for i in 0..self.rounds {
            let started = Instant::now();
            let done = round(i);
            let took = started.elapsed();
            if interleaved {
                self.rates.push(done.len() as f64 / took.as_secs_f64());
                self.ceilings.push(meter.exclude(d, || ceiling.measure()));
            }
            wall += took;
            samples.extend(done);
        }
        (samples, wall)
    }

    /// Each round's rate over the mean of the ceilings measured just before and just after it.
    fn ratios(&self) -> Option<Vec<f64>> {
        self.rates
            .iter()
            .enumerate()
            .map(|(i, rate)| {
                let before = (*self.ceilings.get(i)?)?;
                let after = (*self.ceilings.get(i + 1)?)?;
                Some(rate / ((before + after) / 2.0))
            })
            .collect()
    }

    /// The median of the rounds' ratios; `None` with fewer than two rounds or no ceiling figure.
    pub fn median(&self) -> Option<f64> {
        self.ratios().filter(|_| self.rounds > 1).and_then(|r| median(&r))
    }

    /// Prints `ceiling beside this phase: <ceiling> C1/C2/... per second around N rounds
    /// (openssl speed); ratio per round R1/R2/..., median ratio R` (bench/run reads it).
    pub fn report(&self) {
        if self.rounds < 2 {
            return;
        }
        let ratios = self.ratios().unwrap_or_default();
        let Some(median) = median(&ratios) else {
            println!("    ceiling beside this phase: openssl speed gave no figure");
            return;
        };
        let join = |v: &[f64], digits: usize| v.iter().map(|x| format!("{x:.digits$}")).collect::<Vec<_>>().join("/");
        let ceilings: Vec<f64> = self.ceilings.iter().flatten().copied().collect();
        let per_round = join(&ratios, 2);
        println!(
            "    ceiling beside this phase: {} {} per second around {} rounds (openssl speed); ratio per round \
             {per_round}, median ratio {median:.2}",
            self.ceiling.label(),
            join(&ceilings, 0),
            self.rates.len()
        );
    }
}

/// The middle value (the mean of the two middle ones for an even count); `None` for none.
fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[mid]),
        _ => Some((v[mid - 1] + v[mid]) / 2.0),
    }
}
