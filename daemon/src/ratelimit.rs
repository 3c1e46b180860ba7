//! Per-client-IP request limits for the ceremony and token endpoints: a fixed one-minute window
//! per address, in memory. Enough to blunt scripted guessing from one address; not a substitute
//! for a limit at the edge when many addresses are involved. An IPv6 client is counted by its
//! /64, the block one subscriber or host is given: its 2^64 addresses are one caller's.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use crate::clock::Timestamp;

/// Per (address, bucket): the minute being counted and the requests in it.
type Windows = HashMap<(IpAddr, &'static str), (Timestamp, u32)>;

#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: Mutex<Windows>,
}

/// The address a limit counts: an IPv6 address's /64 (an IPv4-mapped one as IPv4), an IPv4
/// address as it is.
fn caller(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
        v4 => v4,
    }
}

impl RateLimiter {
    /// Counts one request of `bucket` from `ip` at `now`; false when it is over `per_minute`
    /// (0 means no limit).
    pub fn allow(&self, ip: IpAddr, bucket: &'static str, per_minute: u32, now: Timestamp) -> bool {
        if per_minute == 0 {
            return true;
        }
        let minute = now.div_euclid(60);
        let mut map = match self.windows.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        if map.len() > 100_000 {
            map.retain(|_, (m, _)| *m == minute);
        }
        let entry = map.entry((caller(ip), bucket)).or_insert((minute, 0));
        if entry.0 != minute {
            *entry = (minute, 0);
        }
        entry.1 += 1;
        entry.1 <= per_minute
    }

    /// Whether `ip` has used up `bucket`'s `per_minute` in the minute of `now`, without counting
    /// a request: for limits on failures, counted with [`RateLimiter::allow`] only when one
    /// happens, but checked before every attempt.
    pub fn exhausted(&self, ip: IpAddr, bucket: &'static str, per_minute: u32, now: Timestamp) -> bool {
        if per_minute == 0 {
            return false;
        }
        let map = match self.windows.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        map.get(&(caller(ip), bucket)).is_some_and(|(minute, n)| *minute == now.div_euclid(60) && *n >= per_minute)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_resets_each_minute() {
        let r = RateLimiter::default();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(r.allow(ip, "c", 2, 60));
        assert!(r.allow(ip, "c", 2, 61));
        assert!(!r.allow(ip, "c", 2, 62));
        assert!(r.allow(ip, "t", 2, 62), "buckets are separate");
        assert!(r.allow("10.0.0.2".parse().unwrap(), "c", 2, 62), "addresses are separate");
        assert!(r.allow(ip, "c", 2, 120));
        assert!(r.allow(ip, "c", 0, 120));
    }

    #[test]
    fn an_ipv6_caller_is_its_64() {
        let r = RateLimiter::default();
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap();
        assert!(r.allow(a, "c", 2, 60));
        assert!(r.allow(b, "c", 2, 60));
        assert!(!r.allow("2001:db8:1:2:abcd::9".parse().unwrap(), "c", 2, 60), "the same /64");
        assert!(r.allow("2001:db8:1:3::1".parse().unwrap(), "c", 2, 60), "the next /64");
        assert!(r.exhausted(b, "c", 2, 60));
        // An IPv4-mapped address is the IPv4 address.
        assert!(r.allow("::ffff:10.0.0.9".parse().unwrap(), "c", 1, 60));
        assert!(!r.allow("10.0.0.9".parse().unwrap(), "c", 1, 60));
    }

    #[test]
    fn exhausted_checks_without_counting() {
        let r = RateLimiter::default();
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert!(!r.exhausted(ip, "w", 2, 60));
        assert!(!r.exhausted(ip, "w", 2, 60), "checking counts nothing");
        assert!(r.allow(ip, "w", 2, 60));
        assert!(!r.exhausted(ip, "w", 2, 61));
        assert!(r.allow(ip, "w", 2, 61));
        assert!(r.exhausted(ip, "w", 2, 62));
        assert!(!r.exhausted(ip, "w", 2, 120), "a new minute");
        assert!(!r.exhausted(ip, "w", 0, 62), "0 means no limit");
    }
}
