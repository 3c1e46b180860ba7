//! Address ranges for `server.trusted_proxies`: a single address (`10.0.0.5`, `::1`) or a CIDR
//! range (`10.0.0.0/8`, `fd00::/8`). An IPv4 range also matches IPv4-mapped IPv6 peers
//! (`::ffff:10.1.2.3`), which is how a dual-stack listener reports them.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange {
    network: IpAddr,
    prefix: u8,
}

impl IpRange {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => masked(u32::from(ip).into(), 32, self.prefix) == u32::from(net).into(),
            (IpAddr::V6(net), IpAddr::V6(ip)) => masked(u128::from(ip), 128, self.prefix) == u128::from(net),
            _ => false,
        }
    }
}

/// `value` with all but its first `prefix` bits (of `width`) cleared.
fn masked(value: u128, width: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        return 0;
    }
    let keep = u32::from(width - prefix);
    (value >> keep) << keep
}

impl FromStr for IpRange {
    type Err = String;

    fn from_str(text: &str) -> Result<IpRange, String> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .trim()
            .parse()
            .map_err(|_| format!("{text:?} is not an IP address or a CIDR range like 10.0.0.0/8"))?;
        let width: u8 = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => width,
            Some(p) => match p.trim().parse::<u8>() {
                Ok(n) if n <= width => n,
                _ => return Err(format!("{text:?}: the prefix length must be 0 to {width}")),
            },
        };
        let network = match addr {
            IpAddr::V4(a) => IpAddr::V4((masked(u32::from(a).into(), 32, prefix) as u32).into()),
            IpAddr::V6(a) => IpAddr::V6(masked(u128::from(a), 128, prefix).into()),
        };
        if network != addr {
            return Err(format!("{text:?} has host bits set; the range is {network}/{prefix}"));
        }
        Ok(IpRange { network, prefix })
    }
}

impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = if self.network.is_ipv4() { 32 } else { 128 };
        if self.prefix == width { write!(f, "{}", self.network) } else { write!(f, "{}/{}", self.network, self.prefix) }
    }
}

/// Whether any of `ranges` contains `ip`.
pub fn any_contains(ranges: &[IpRange], ip: IpAddr) -> bool {
    ranges.iter().any(|r| r.contains(ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn single_addresses_and_ranges() {
        let one: IpRange = "10.0.0.5".parse().unwrap();
        assert!(one.contains(ip("10.0.0.5")) && !one.contains(ip("10.0.0.6")));
        let eight: IpRange = "10.0.0.0/8".parse().unwrap();
        assert!(eight.contains(ip("10.200.3.4")) && !eight.contains(ip("11.0.0.1")));
        assert!(eight.contains(ip("::ffff:10.1.2.3")), "IPv4-mapped peers of a dual-stack listener");
        let v6: IpRange = "fd00::/8".parse().unwrap();
        assert!(v6.contains(ip("fd12::1")) && !v6.contains(ip("fe80::1")) && !v6.contains(ip("10.0.0.1")));
        let all: IpRange = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("203.0.113.9")));
        assert_eq!(eight.to_string(), "10.0.0.0/8");
        assert_eq!(one.to_string(), "10.0.0.5");
    }

    #[test]
    fn refusals_say_why() {
        assert!("10.0.0.1/8".parse::<IpRange>().unwrap_err().contains("10.0.0.0/8"));
        assert!("10.0.0.0/33".parse::<IpRange>().unwrap_err().contains("0 to 32"));
        assert!("proxy.local".parse::<IpRange>().unwrap_err().contains("CIDR"));
    }
}
