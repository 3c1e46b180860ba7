//! Benchmark: the per-address rate limiter (`latchkey_domain::ratelimit`) as the number of distinct
//! callers in one minute grows to a million, beside the limiter it replaced (one map under one
//! lock, swept whole on every call past 100,000 callers), measured in the same run. Prints
//! nanoseconds per call (one thread, then two threads at once) and the memory the callers take.
//!
//! Run: `cargo bench -p latchkey-tests --bench ratelimit`. Prints figures; asserts nothing about
//! speed.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::time::Instant;

use latchkey_domain::ratelimit::{Bucket, RateLimiter};

/// Per (address, bucket): the minute being counted and the requests in it.
type Windows = HashMap<(IpAddr, &'static str), (i64, u32)>;

/// The limiter before the review, kept here only to be measured beside the new one.
#[derive(Default)]
struct Previous {
    windows: Mutex<Windows>,
}

impl Previous {
    fn allow(&self, ip: IpAddr, bucket: &'static str, per_minute: u32, now: i64) -> bool {
        let minute = now.div_euclid(60);
        let mut map = self.windows.lock().unwrap();
        if map.len() > 100_000 {
            map.retain(|_, (m, _)| *m == minute);
        }
        let entry = map.entry((ip, bucket)).or_insert((minute, 0));
        if entry.0 != minute {
            *entry = (minute, 0);
        }
        entry.1 += 1;
        entry.1 <= per_minute
    }
}

/// The i-th distinct caller: an IPv6 /64.
fn caller(i: u64) -> IpAddr {
    IpAddr::V6(Ipv6Addr::from((0x2001_0db8_u128 << 96) | (u128::from(i) << 64) | 1))
}

/// A cheap, repeatable spread of indices (xorshift).
fn spread(seed: &mut u64, n: u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed % n
}

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Nanoseconds per call of `calls` calls on `threads` threads at once (each its own callers).
fn per_call(threads: u64, calls: u64, n: u64, allow: &(dyn Fn(IpAddr) -> bool + Sync)) -> f64 {
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let mut seed = 0x9e37_79b9_7f4a_7c15 ^ (t + 1);
                for _ in 0..calls {
                    std::hint::black_box(allow(caller(spread(&mut seed, n))));
                }
            });
        }
    });
    start.elapsed().as_nanos() as f64 / (calls * threads) as f64
}

fn main() {
    const CALLS: u64 = 1_000_000;
    println!("Rate limiter: nanoseconds per call with N distinct callers (IPv6 /64s) in the current minute");
    println!("| callers N | new, 1 thread | new, 2 threads | new, memory | previous, 1 thread | previous ÷ new |");
    println!("|---|---|---|---|---|---|");
    for n in [1_000u64, 100_000, 130_000, 1_000_000] {
        let before = rss_mib();
        let new = RateLimiter::default();
        for i in 0..n {
            new.allow(caller(i), Bucket::Ceremony, 120, 0);
        }
        let memory = rss_mib() - before;
        let one = per_call(1, CALLS, n, &|ip| new.allow(ip, Bucket::Ceremony, 120, 1));
        let two = per_call(2, CALLS / 2, n, &|ip| new.allow(ip, Bucket::Ceremony, 120, 1));
        drop(new);
        // Past 100,000 callers the previous limiter sweeps its whole map on every call: a few
        // thousand calls are enough to see it; filling it with a million callers would take hours
        // (each of the last 900,000 sweeps the map), so that row has no figure for it.
        if n > 200_000 {
            println!("| {n} | {one:.0} | {two:.0} | {memory:.1} MiB | (hours to fill) | - |");
            continue;
        }
        let previous = Previous::default();
        for i in 0..n {
            previous.allow(caller(i), "ceremony", 120, 0);
        }
        let calls = if n > 100_000 { 2_000 } else { CALLS };
        let old = per_call(1, calls, n, &|ip| previous.allow(ip, "ceremony", 120, 1));
        println!("| {n} | {one:.0} | {two:.0} | {memory:.1} MiB | {old:.0} | {:.1}× |", old / one);
    }
    let full = RateLimiter::default();
    let start = Instant::now();
    for i in 0..(latchkey_domain::ratelimit::MAX_CALLERS as u64 + 500_000) {
        full.allow(caller(i), Bucket::Ceremony, 120, 0);
    }
    println!(
        "\nPast its bound ({} callers a minute): {} of {} calls let through uncounted, {:.0} ns per call, {} callers held",
        latchkey_domain::ratelimit::MAX_CALLERS,
        full.untracked(),
        latchkey_domain::ratelimit::MAX_CALLERS + 500_000,
        start.elapsed().as_nanos() as f64 / (latchkey_domain::ratelimit::MAX_CALLERS + 500_000) as f64,
        full.callers()
    );
}
