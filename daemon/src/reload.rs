//! What SIGHUP changes without a restart: the log filter, the per-IP rate limits, the SMTP
//! settings (its password file read again) and the TLS certificate and key files. `main.rs` reads
//! the configuration again with the flags and environment of the start and hands it to
//! [`apply`]; everything is prepared first, so an error keeps every old setting.

use latchkey_domain::config::Config;
use latchkey_domain::live::{Live, LogFilterSetter, TlsSlot};

/// What a reload did, for the log.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub reloaded: Vec<String>,
    /// Settings that changed in the file but take effect only after a restart.
    pub needs_restart: Vec<&'static str>,
}

/// Prepares every new setting, then swaps them in together; on any error nothing changes.
pub fn apply(
    state: &latchkey_domain::state::State,
    new: &Config,
    tls: Option<&TlsSlot>,
    log_filter: Option<&LogFilterSetter>,
) -> Result<Report, String> {
    let old = &state.config;
    let live = Live::from_config(new)?;
    let tls_config = match (&new.tls, tls) {
        (Some(files), Some(_)) => Some(crate::certs::server_config(&files.cert, &files.key)?),
        (Some(_), None) => None,
        (None, _) => None,
    };
    // The filter last among the fallible steps: once it is set, nothing else can fail.
    let mut report = Report::default();
    let old_filter = state.log_filter.get();
    if new.log_filter != *old_filter {
        if let Some(set) = log_filter {
            set(&new.log_filter).map_err(|e| format!("server.log_level {:?}: {e}", new.log_filter))?;
        }
        state.log_filter.set(new.log_filter.clone());
        report.reloaded.push(format!("log level {:?} (was {:?})", new.log_filter, old_filter.as_str()));
    }

    let was = state.live.get();
    if (was.ceremony_rate_per_minute, was.token_rate_per_minute)
        != (live.ceremony_rate_per_minute, live.token_rate_per_minute)
    {
        report.reloaded.push(format!(
            "rate limits: ceremonies {}/min, token endpoints {}/min",
            live.ceremony_rate_per_minute, live.token_rate_per_minute
        ));
    }
    match (&live.smtp, &was.smtp) {
        (Some(s), _) => report.reloaded.push(format!("SMTP settings ({}:{})", s.host, s.port)),
        (None, Some(_)) => report.reloaded.push("SMTP turned off".to_owned()),
        (None, None) => {}
    }
    state.live.set(live);
    if let (Some(config), Some(slot)) = (tls_config, tls) {
        slot.set_arc(config);
        report.reloaded.push("TLS certificate and key".to_owned());
    }

    let fixed: [(&'static str, bool); 15] = [
        ("server.listen", new.listen != old.listen),
        ("server.public_url", new.public_url != old.public_url),
        ("server.tls_cert/tls_key (turning TLS on or off)", new.tls.is_some() != old.tls.is_some()),
        ("server.trusted_proxies", new.trusted_proxies != old.trusted_proxies),
        ("server.log_format", new.log_format != old.log_format),
        ("server.max_connections", new.max_connections != old.max_connections),
        ("server.drain", new.drain != old.drain),
        ("storage.path", new.storage_path != old.storage_path),
        ("storage.backend", new.storage_backend != old.storage_backend),
        ("storage.url_file, pool_size, sslrootcert, pooler or direct_url_file", new.postgres != old.postgres),
        (
            "admin.*",
            (new.admin_socket != old.admin_socket)
                || new.socket_mode != old.socket_mode
                || new.allowed_uids != old.allowed_uids,
        ),
        ("keys.*", new.rsa_bits != old.rsa_bits || new.kek_file != old.kek_file),
        ("signing.rsa_engine", new.rsa_engine != old.rsa_engine),
        ("tokens.* and webauthn.challenge_ttl", new.tokens != old.tokens || new.challenge_ttl != old.challenge_ttl),
        (
            "limits body and file sizes, audit.retention",
            new.limits.json_body_max != old.limits.json_body_max
                || new.limits.invite_file_max != old.limits.invite_file_max
                || new.limits.invite_rows_max != old.limits.invite_rows_max
                || new.audit_retention != old.audit_retention,
        ),
    ];
    report.needs_restart = fixed.iter().filter(|(_, changed)| *changed).map(|(name, _)| *name).collect();
    Ok(report)
}
