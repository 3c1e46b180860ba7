//! The machine's ceiling measured right beside a bench phase, before and after it. This shared
//! machine's speed drifts within one `bench/run` (one core's RSA-2048 signs measured 3,173 to
//! 4,112 per second on one day), so a ratio against a ceiling taken minutes earlier can be off by
//! as much as the goal's margin. The phase's figure is divided by the mean of the two.
#![allow(dead_code)]

use std::process::Command;

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

    /// One two-second `openssl speed` run; `None` without openssl or with output it cannot read.
    pub fn measure(self) -> Option<f64> {
        let cores = cores().to_string();
        let args: Vec<&str> = match self {
            Ceiling::RsaSignsAllCores => vec!["speed", "-multi", &cores, "-seconds", "2", "rsa2048"],
            Ceiling::P256VerifiesOneCore => vec!["speed", "-seconds", "2", "ecdsap256"],
        };
        let out = Command::new("openssl").args(&args).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        // "rsa 2048 bits 0.000135s 0.000009s 7413.7 115924.0": signs/s is the fifth figure;
        // " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  39580.5  16964.7": verifies/s is last.
        let (prefix, column) = match self {
            Ceiling::RsaSignsAllCores => ("rsa 2048 bits", 5),
            Ceiling::P256VerifiesOneCore => ("256 bits ecdsa (nistp256)", 7),
        };
        let line = text.lines().find(|l| l.trim_start().starts_with(prefix))?;
        line.split_whitespace().nth(column)?.parse().ok()
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// A ceiling measured just before a phase; [`Beside::report`] measures it again just after.
pub struct Beside {
    ceiling: Ceiling,
    before: Option<f64>,
}

impl Beside {
    pub fn before(ceiling: Ceiling) -> Beside {
        Beside { ceiling, before: ceiling.measure() }
    }

    /// Prints `ceiling beside this phase: ... before B/s, after A/s, ratio R` under the phase's
    /// figures (bench/run reads the ratio from it).
    pub fn report(self, rate: f64) {
        let after = self.ceiling.measure();
        match (self.before, after) {
            (Some(b), Some(a)) => println!(
                "    ceiling beside this phase: {} before {b:.0}/s, after {a:.0}/s (openssl speed), ratio {:.2}",
                self.ceiling.label(),
                rate / ((a + b) / 2.0)
            ),
            _ => println!("    ceiling beside this phase: openssl speed gave no figure"),
        }
    }
}
