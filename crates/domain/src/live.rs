//! The settings SIGHUP may replace while requests read them ([`Live`]), and the swappable
//! [`Slot`] that holds each: the log filter, the limits and SMTP, the TLS configuration.
//! The server's `reload` decides what a new configuration changes.

use std::sync::{Arc, RwLock};

use rustls::ServerConfig;

use crate::config::{Config, Smtp};
use crate::mail::Mailer;

/// The settings a reload may replace, read once per request through [`LiveSlot::get`].
#[derive(Debug)]
pub struct Live {
    pub ceremony_rate_per_minute: u32,
    pub token_rate_per_minute: u32,
    pub smtp: Option<Smtp>,
    /// Present when `[smtp]` is configured.
    pub mailer: Option<Arc<Mailer>>,
}

impl Live {
    pub fn from_config(config: &Config) -> Result<Live, String> {
        let mailer = match &config.smtp {
            Some(smtp) => Some(Arc::new(Mailer::from_config(smtp)?)),
            None => None,
        };
        Ok(Live {
            ceremony_rate_per_minute: config.limits.ceremony_rate_per_minute,
            token_rate_per_minute: config.limits.token_rate_per_minute,
            smtp: config.smtp.clone(),
            mailer,
        })
    }
}

/// A shared, swappable value: readers clone the `Arc` under a short read lock.
#[derive(Debug)]
pub struct Slot<T>(RwLock<Arc<T>>);

impl<T> Slot<T> {
    pub fn new(value: T) -> Slot<T> {
        Slot(RwLock::new(Arc::new(value)))
    }

    pub fn from_arc(value: Arc<T>) -> Slot<T> {
        Slot(RwLock::new(value))
    }

    pub fn get(&self) -> Arc<T> {
        match self.0.read() {
            Ok(g) => g.clone(),
            // A writer never panics while holding the lock; if one did, the value is still whole.
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub fn set(&self, value: T) {
        match self.0.write() {
            Ok(mut g) => *g = Arc::new(value),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(value),
        }
    }

    pub fn set_arc(&self, value: Arc<T>) {
        match self.0.write() {
            Ok(mut g) => *g = value,
            Err(poisoned) => *poisoned.into_inner() = value,
        }
    }
}

pub type LiveSlot = Slot<Live>;
pub type TlsSlot = Arc<Slot<ServerConfig>>;

/// Sets the log filter (a `tracing_subscriber` reload handle in `main.rs`).
pub type LogFilterSetter = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;
