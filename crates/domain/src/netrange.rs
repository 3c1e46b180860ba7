//! Address ranges for `server.trusted_proxies`: a single address (`10.0.0.5`, `::1`) or a CIDR
//! range (`10.0.0.0/8`, `fd00::/8`). An IPv4 range also matches IPv4-mapped IPv6 peers
//! (`::ffff:10.1.2.3`), which is how a dual-stack listener reports them.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use ipnet::IpNet;

/// A trusted range: the `ipnet` network, written back as the operator wrote it (an address alone
/// without its `/32` or `/128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange(IpNet);

impl IpRange {
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(&ip.to_canonical())
    }
}

impl FromStr for IpRange {
    type Err = String;

    fn from_str(text: &str) -> Result<IpRange, String> {
        let text = text.trim();
        let net = match text.parse::<IpNet>() {
            Ok(net) => net,
            Err(_) => match text.parse::<IpAddr>() {
                Ok(addr) => IpNet::from(addr),
                Err(_) => {
                    let (addr, prefix) = text.split_once('/').unwrap_or((text, ""));
                    return Err(match addr.trim().parse::<IpAddr>() {
                        Ok(a) => {
                            let width = if a.is_ipv4() { 32 } else { 128 };
                            format!("{text:?}: the prefix length {prefix:?} must be 0 to {width}")
                        }
                        Err(_) => format!("{text:?} is not an IP address or a CIDR range like 10.0.0.0/8"),
                    });
                }
            },
        };
        if net.network() != net.addr() {
            return Err(format!("{text:?} has host bits set; the range is {}", net.trunc()));
        }
        Ok(IpRange(net))
    }
}

impl fmt::Display for IpRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.prefix_len() == self.0.max_prefix_len() {
            write!(f, "{}", self.0.addr())
        } else {
            write!(f, "{}", self.0)
        }
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
