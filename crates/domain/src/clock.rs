//! Time, injected: the daemon asks a [`Clock`], never the system directly, so tests can move time
//! (expired challenges, codes and tokens) without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Seconds since the Unix epoch.
pub use latchkey_store::Timestamp;

pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> Timestamp;
}

pub type SharedClock = Arc<dyn Clock>;

#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        since.map(|d| d.as_secs() as i64).unwrap_or(0)
    }
}

/// A clock that tests set and advance by hand; it starts at the system time.
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new() -> Arc<ManualClock> {
        Arc::new(ManualClock(AtomicI64::new(SystemClock.now())))
    }

    pub fn advance(&self, seconds: i64) {
        self.0.fetch_add(seconds, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        self.0.load(Ordering::SeqCst)
    }
}

/// `YYYY-MM-DD` in UTC, the date format of every `created` field.
pub fn date(ts: Timestamp) -> String {
    match time::OffsetDateTime::from_unix_timestamp(ts) {
        Ok(t) => format!("{:04}-{:02}-{:02}", t.year(), u8::from(t.month()), t.day()),
        Err(_) => "invalid-date".to_owned(),
    }
}

/// RFC 3339 in UTC, for `expires_at` fields and logs.
pub fn rfc3339(ts: Timestamp) -> String {
    time::OffsetDateTime::from_unix_timestamp(ts)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| ts.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_795_000_000), "2026-11-18");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    }

    #[test]
    fn manual_clock_moves() {
        let c = ManualClock::new();
        let t = c.now();
        c.advance(61);
        assert_eq!(c.now(), t + 61);
    }
}
