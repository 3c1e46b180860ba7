//! Per-client-IP request limits for the ceremony and token endpoints: a fixed one-minute window
//! per address, in memory. Enough to blunt scripted guessing from one address; not a substitute
//! for a limit at the edge when many addresses are involved. An IPv6 client is counted by its
//! /64, the block one subscriber or host is given: its 2^64 addresses are one caller's.
//!
//! The counters live in `SHARDS` maps, each behind its own lock and chosen by a keyed hash (so
//! no client can aim at one): a request takes one lock for one lookup, whatever the number of
//! callers. A map is emptied when its minute is over, which is all the forgetting a fixed window
//! needs. Memory is bounded (about 26 MiB): past [`MAX_CALLERS`] callers in one minute, new ones are let through
//! uncounted (and counted in `latchkey_rate_limit_untracked_total`). That gives nothing away: a
//! client with a million addresses gets a million windows' worth of requests however well each
//! is counted. (Hand-written rather than `governor`: its keyed limiter is an unbounded map that
//! must be swept from outside, which is the cost this replaces.)

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::clock::Timestamp;

/// Independent maps; a power of two well above the number of worker threads.
const SHARDS: usize = 64;
/// Callers a shard counts per minute: as many as a map of 16,384 slots holds before it would
/// grow to twice that (7/8 of its slots), so that a full limiter takes about 26 MiB.
const PER_SHARD: usize = 16_384 / 8 * 7;
/// Callers counted per minute, over all shards.
pub const MAX_CALLERS: usize = PER_SHARD * SHARDS;

/// What a limit counts separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Bucket {
    /// The passkey ceremonies.
    Ceremony,
    /// Authorization requests and social login starts, which store what a sign-in needs.
    Authorize,
    /// The token, revocation, introspection and device authorization endpoints.
    Token,
    /// Wrong user codes typed on the device page.
    DeviceUserCodes,
}

/// A caller in a bucket: the address (IPv4, or an IPv6 /64's upper half) and, in one byte, the
/// bucket and whether the address is IPv6. Sixteen bytes, so that a million of them stay small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    address: u64,
    tag: u8,
}

#[derive(Debug, Default)]
struct Shard {
    /// The minute the counts are of.
    minute: Timestamp,
    counts: HashMap<Key, u32>,
}

#[derive(Debug)]
pub struct RateLimiter {
    shards: Box<[Mutex<Shard>]>,
    /// Picks a caller's shard; random per process, so that shards cannot be aimed at.
    pick: std::collections::hash_map::RandomState,
    untracked: AtomicU64,
}

impl Default for RateLimiter {
    fn default() -> RateLimiter {
        RateLimiter {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            pick: Default::default(),
            untracked: AtomicU64::new(0),
        }
    }
}

/// The caller a limit counts: an IPv6 address's /64 (an IPv4-mapped one as IPv4), an IPv4
/// address as it is.
fn caller(ip: IpAddr, bucket: Bucket) -> Key {
    let tag = (bucket as u8) << 1;
    match ip.to_canonical() {
        IpAddr::V4(v4) => Key { address: u64::from(u32::from(v4)), tag },
        IpAddr::V6(v6) => Key { address: (u128::from(v6) >> 64) as u64, tag: tag | 1 },
    }
}

impl RateLimiter {
    /// The shard of `key`, its counts made current for the minute of `now`.
    fn shard(&self, key: &Key, now: Timestamp) -> MutexGuard<'_, Shard> {
        let i = (self.pick.hash_one(key) as usize) % SHARDS;
        // A counter holds no invariant that a panic elsewhere could break.
        let mut shard = self.shards[i].lock().unwrap_or_else(PoisonError::into_inner);
        let minute = now.div_euclid(60);
        if shard.minute != minute {
            shard.minute = minute;
            shard.counts.clear();
        }
        shard
    }

    /// Counts one request of `bucket` from `ip` at `now`; false when it is over `per_minute`
    /// (0 means no limit).
    pub fn allow(&self, ip: IpAddr, bucket: Bucket, per_minute: u32, now: Timestamp) -> bool {
        if per_minute == 0 {
            return true;
        }
        let key = caller(ip, bucket);
        let mut shard = self.shard(&key, now);
        let full = shard.counts.len() >= PER_SHARD;
        match shard.counts.get_mut(&key) {
            Some(n) => {
                *n = n.saturating_add(1);
                *n <= per_minute
            }
            None if full => {
                self.untracked.fetch_add(1, Ordering::Relaxed);
                true
            }
            None => {
                shard.counts.insert(key, 1);
                1 <= per_minute
            }
        }
    }

    /// Whether `ip` has used up `bucket`'s `per_minute` in the minute of `now`, without counting
    /// a request: for limits on failures, counted with [`RateLimiter::allow`] only when one
    /// happens, but checked before every attempt.
    pub fn exhausted(&self, ip: IpAddr, bucket: Bucket, per_minute: u32, now: Timestamp) -> bool {
        if per_minute == 0 {
            return false;
        }
        let key = caller(ip, bucket);
        self.shard(&key, now).counts.get(&key).is_some_and(|n| *n >= per_minute)
    }

    /// Requests let through uncounted because the limiter was full (`/metrics`).
    pub fn untracked(&self) -> u64 {
        self.untracked.load(Ordering::Relaxed)
    }

    /// Callers counted in the current minutes of all shards.
    pub fn callers(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).counts.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Bucket = Bucket::Ceremony;
    const T: Bucket = Bucket::Token;
    const W: Bucket = Bucket::DeviceUserCodes;

    #[test]
    fn window_resets_each_minute() {
        let r = RateLimiter::default();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(r.allow(ip, C, 2, 60));
        assert!(r.allow(ip, C, 2, 61));
        assert!(!r.allow(ip, C, 2, 62));
        assert!(r.allow(ip, T, 2, 62), "buckets are separate");
        assert!(r.allow("10.0.0.2".parse().unwrap(), C, 2, 62), "addresses are separate");
        assert!(r.allow(ip, C, 2, 120));
        assert!(r.allow(ip, C, 0, 120));
    }

    #[test]
    fn an_ipv6_caller_is_its_64() {
        let r = RateLimiter::default();
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap();
        assert!(r.allow(a, C, 2, 60));
        assert!(r.allow(b, C, 2, 60));
        assert!(!r.allow("2001:db8:1:2:abcd::9".parse().unwrap(), C, 2, 60), "the same /64");
        assert!(r.allow("2001:db8:1:3::1".parse().unwrap(), C, 2, 60), "the next /64");
        assert!(r.exhausted(b, C, 2, 60));
        // An IPv4-mapped address is the IPv4 address, and no IPv6 /64 is an IPv4 address.
        assert!(r.allow("::ffff:10.0.0.9".parse().unwrap(), C, 1, 60));
        assert!(!r.allow("10.0.0.9".parse().unwrap(), C, 1, 60));
        assert!(r.allow("0:0:0:a::".parse().unwrap(), C, 1, 60), "::a:0:0:0/64 is not 0.0.0.10");
        assert!(r.allow("0.0.0.10".parse().unwrap(), C, 1, 60));
    }

    #[test]
    fn exhausted_checks_without_counting() {
        let r = RateLimiter::default();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(!r.exhausted(ip, W, 2, 60));
        assert!(!r.exhausted(ip, W, 2, 60), "checking counts nothing");
        assert!(r.allow(ip, W, 2, 60));
        assert!(!r.exhausted(ip, W, 2, 61));
        assert!(r.allow(ip, W, 2, 61));
        assert!(r.exhausted(ip, W, 2, 62));
        assert!(!r.exhausted(ip, W, 2, 120), "a new minute");
        assert!(!r.exhausted(ip, W, 0, 62), "0 means no limit");
    }

    #[test]
    fn memory_is_bounded_and_forgotten_each_minute() {
        let r = RateLimiter::default();
        let v6 = |i: u64| IpAddr::V6(std::net::Ipv6Addr::from(u128::from(i) << 64));
        for i in 0..(MAX_CALLERS as u64 + 50_000) {
            r.allow(v6(i), C, 5, 60);
        }
        assert!(r.callers() <= MAX_CALLERS, "{}", r.callers());
        assert!(r.untracked() >= 50_000, "the callers past the bound are let through uncounted");
        // A caller counted before the limiter filled up is still limited.
        for _ in 0..5 {
            r.allow(v6(0), C, 5, 61);
        }
        assert!(!r.allow(v6(0), C, 5, 61));
        // The next minute starts empty: a caller left uncounted in the full minute is counted.
        assert!(r.allow(v6(0), C, 5, 120));
        let late = v6(MAX_CALLERS as u64 + 49_999);
        for _ in 0..5 {
            assert!(r.allow(late, C, 5, 121));
        }
        assert!(!r.allow(late, C, 5, 121));
    }
}
