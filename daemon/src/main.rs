//! `latchkeyd` entry point: arguments, logging, runtime, signals. Everything else is in the library.

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use latchkey_domain::config::{Config, LogFormat, Overrides};
use latchkey_domain::live::LogFilterSetter;
use latchkeyd::args::{Args, Command, MigrateStore, StoreEngine};
use latchkeyd::server::{self, Options, Ready};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, oneshot, watch};

fn main() -> ExitCode {
    let args = Args::parse();
    let flags = Overrides {
        config: args.config.clone(),
        dev: args.dev,
        listen: args.listen.clone(),
        data_dir: args.data_dir.clone(),
    };
    if let Some(Command::CheckConfig) = &args.command {
        return check_config(&flags);
    }
    let config = match Config::load(&flags, std::env::vars()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("latchkeyd: {e}");
            return ExitCode::from(1);
        }
    };
    match &args.command {
        Some(Command::CheckConfig) => return check_config(&flags),
        Some(Command::MigrateStore(m)) => return migrate_store(&config, m),
        None => {}
    }
    let log_filter = init_logging(config.log_format, &config.log_filter);
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("latchkeyd: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        let (stop_tx, stop_rx) = watch::channel(false);
        let (now_tx, now_rx) = watch::channel(false);
        let (ready_tx, ready_rx) = oneshot::channel();
        let (reload_tx, reload_rx) = mpsc::channel(1);
        let dev = config.dev;
        let data_dir = args.data_dir.clone();
        let mut options = Options::new(stop_rx);
        options.stop_now = Some(now_rx);
        options.ready = Some(ready_tx);
        options.reload = Some(reload_rx);
        options.log_filter = Some(log_filter);
        let daemon = tokio::spawn(server::run(config, options));

        tokio::spawn(async move {
            if let Ok(ready) = ready_rx.await
                && dev
            {
                print_dev_banner(&ready, data_dir.as_deref());
            }
        });
        tokio::spawn(async move {
            wait_for_signals(&flags, reload_tx.clone()).await;
            tracing::info!("shutting down: finishing in-flight requests");
            let _ = stop_tx.send(true);
            // A second signal ends the drain (`server.drain`) at once.
            wait_for_signals(&flags, reload_tx).await;
            let _ = now_tx.send(true);
        });

        match daemon.await {
            Ok(Ok(())) => ExitCode::SUCCESS,
            Ok(Err(e)) => {
                eprintln!("latchkeyd: {e}");
                ExitCode::from(1)
            }
            Err(e) => {
                eprintln!("latchkeyd: {e}");
                ExitCode::from(1)
            }
        }
    })
}

/// `check-config`: every problem in one run: a file that cannot be read or parsed (the parser
/// stops at its first syntax error), then each invalid value, then each file the configuration
/// names that cannot be used.
fn check_config(flags: &Overrides) -> ExitCode {
    let (config, mut problems) = match Config::load_checked(flags, std::env::vars()) {
        Ok((config, invalid)) => (config, invalid.iter().map(ToString::to_string).collect::<Vec<_>>()),
        Err(e) => (None, vec![e.to_string()]),
    };
    if let Some(config) = &config {
        for warning in &config.warnings {
            eprintln!("latchkeyd: warning: {warning}");
        }
        problems.extend(latchkeyd::checkfiles::problems(config));
        match latchkeyd::checkfiles::database_schema(config) {
            Ok(line) => eprintln!("latchkeyd: {line}"),
            Err(problem) => problems.push(problem),
        }
    }
    match config {
        Some(config) if problems.is_empty() => {
            print!("{}", config.to_toml());
            eprintln!("latchkeyd: configuration is valid");
            ExitCode::SUCCESS
        }
        _ => {
            for p in &problems {
                eprintln!("latchkeyd: {p}");
            }
            eprintln!("latchkeyd: configuration has {} problem(s)", problems.len());
            ExitCode::from(1)
        }
    }
}

/// `migrate-store --to postgres`: SQLite (`--from`, else the configured file) into the configured
/// PostgreSQL database. Runs before any runtime: the PostgreSQL client blocks.
fn migrate_store(config: &Config, m: &MigrateStore) -> ExitCode {
    let StoreEngine::Postgres = m.to;
    for warning in &config.warnings {
        eprintln!("latchkeyd: warning: {warning}");
    }
    let Some(to) = config.postgres.clone() else {
        eprintln!(
            "latchkeyd: migrate-store copies into the PostgreSQL database of the configuration, and its [storage] \
             backend is \"sqlite\". Set backend = \"postgres\" and url_file (or the PG* variables) in [storage] \
             (keep storage.path, or name the SQLite file with --from), then run migrate-store again"
        );
        return ExitCode::from(1);
    };
    let plan = latchkey_store::migrate_store::Plan {
        from: m.from.clone().unwrap_or_else(|| config.storage_path.clone()),
        to,
        kek_file: config.kek_file.clone(),
    };
    eprintln!("latchkeyd: copying {} into PostgreSQL", plan.from.display());
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr();
    match latchkey_store::migrate_store::run(&plan, &mut out, &mut err) {
        Ok(copied) => {
            println!();
            print!("{}", latchkey_store::migrate_store::next_steps(&plan, &copied));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("latchkeyd: {e}");
            ExitCode::from(1)
        }
    }
}

/// Returns when SIGTERM or SIGINT arrives. SIGHUP reads the configuration again (same flags and
/// environment as the start) and hands it to the daemon; a file that does not load is reported
/// and the running settings stay.
async fn wait_for_signals(flags: &Overrides, reload: mpsc::Sender<Config>) {
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        // Without signal handlers the daemon can still be stopped by SIGKILL; say so and wait.
        eprintln!("latchkeyd: cannot install signal handlers");
        return std::future::pending().await;
    };
    let mut hup = signal(SignalKind::hangup()).ok();
    loop {
        tokio::select! {
            _ = term.recv() => return,
            _ = int.recv() => return,
            Some(()) = async { match hup.as_mut() { Some(h) => h.recv().await, None => std::future::pending().await } } => {
                tracing::info!("SIGHUP: reading the configuration again");
                match Config::load(flags, std::env::vars()) {
                    Ok(config) => {
                        let _ = reload.send(config).await;
                    }
                    Err(e) => tracing::error!(error = %e, "reload failed; keeping the current settings"),
                }
            }
        }
    }
}

/// `filter` with webauthn-rs's own log lines turned off, unless it names them. That library logs
/// a refused registration at `error` ("Authenticator ignored requested algorithm set", an RP ID
/// that is an IP address), and a client's mistake is never an error here; the daemon logs each
/// refusal itself, with its cause. `log_level = "info,webauthn_rs_core=debug"` brings them back.
///
/// A bare `debug` or `trace` is for our own crates (every target starting with `latchkey`): the
/// libraries stay at `info` unless the filter names them (`debug,hyper=trace`), so that
/// `log_level = "debug"` is readable rather than a flood of HTTP/2 frames and TLS records.
fn quiet_libraries(filter: &str) -> String {
    const QUIET: &str = "webauthn_rs=off,webauthn_rs_core=off";
    let ours = |directive: &str| match directive.trim() {
        level @ ("debug" | "trace" | "DEBUG" | "TRACE") => format!("info,latchkey={}", level.to_ascii_lowercase()),
        other => other.to_owned(),
    };
    let filter: Vec<String> = filter.split(',').filter(|d| !d.trim().is_empty()).map(ours).collect();
    match filter.join(",") {
        f if f.contains("webauthn") => f,
        f if f.is_empty() => format!("info,{QUIET}"),
        f => format!("{f},{QUIET}"),
    }
}

/// Logs to stderr through a filter that SIGHUP can replace; returns the function that replaces it.
fn init_logging(format: LogFormat, filter: &str) -> LogFilterSetter {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::prelude::*;

    // The filter was validated with the configuration; `info` is only a fallback.
    let initial = EnvFilter::try_new(quiet_libraries(filter)).unwrap_or_else(|_| EnvFilter::new("info"));
    let (filter_layer, handle) = tracing_subscriber::reload::Layer::new(initial);
    // Colour only for a person at a terminal; journald and log files get plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let registry = tracing_subscriber::registry().with(filter_layer);
    match format {
        LogFormat::Json => registry
            .with(tracing_subscriber::fmt::layer().json().flatten_event(true).with_writer(std::io::stderr))
            .init(),
        LogFormat::Text => registry
            .with(tracing_subscriber::fmt::layer().with_target(false).with_ansi(ansi).with_writer(std::io::stderr))
            .init(),
    }
    Box::new(move |text: &str| {
        let filter = EnvFilter::try_new(quiet_libraries(text)).map_err(|e| e.to_string())?;
        handle.reload(filter).map_err(|e| e.to_string())
    })
}

fn print_dev_banner(ready: &Ready, data_dir: Option<&Path>) {
    let socket = ready.admin_socket.display();
    let dir = data_dir.map(|d| d.display().to_string()).unwrap_or_else(|| "./latchkey-data".to_owned());
    println!("latchkeyd is running in development mode (embedded defaults, data in {dir})");
    println!();
    for (slug, issuer) in &ready.tenants {
        println!("  tenant {slug:<10} issuer {issuer}");
        println!("                    discovery {issuer}/.well-known/openid-configuration");
    }
    println!("  admin socket      {socket}");
    if let Some(metrics) = ready.metrics_addr {
        println!("  metrics           http://{metrics}/metrics");
    }
    println!();
    // The CLI finds ./latchkey-data/admin.sock by itself; any other data dir needs --socket.
    let cli = match data_dir {
        None => {
            println!("Next, in another terminal in this directory:");
            "latchkey".to_owned()
        }
        Some(_) => {
            let absolute = std::path::absolute(&ready.admin_socket).unwrap_or_else(|_| ready.admin_socket.clone());
            println!("Next, in another terminal:");
            format!("latchkey --socket {}", absolute.display())
        }
    };
    println!("  {cli} status");
    println!("  {cli} tenant create acme");
    println!(
        "  {cli} app create --tenant acme --name \"My App\" --type web --redirect-uri http://localhost:3000/oidc-callback"
    );
    println!("  {cli} key list --tenant acme");
    println!();
    println!("Stop with Ctrl-C.");
}

#[cfg(test)]
mod tests {
    use super::quiet_libraries;

    #[test]
    fn webauthn_rs_is_quiet_unless_named() {
        assert_eq!(quiet_libraries("info"), "info,webauthn_rs=off,webauthn_rs_core=off");
        assert_eq!(quiet_libraries(" "), "info,webauthn_rs=off,webauthn_rs_core=off");
        assert_eq!(quiet_libraries("debug,webauthn_rs_core=debug"), "info,latchkey=debug,webauthn_rs_core=debug");
        // A bare debug or trace is for our crates; libraries only when named.
        assert_eq!(quiet_libraries("debug"), "info,latchkey=debug,webauthn_rs=off,webauthn_rs_core=off");
        assert_eq!(
            quiet_libraries("trace,hyper=debug"),
            "info,latchkey=trace,hyper=debug,webauthn_rs=off,webauthn_rs_core=off"
        );
        assert_eq!(quiet_libraries("warn"), "warn,webauthn_rs=off,webauthn_rs_core=off");
        for f in ["info", "debug,latchkeyd::http=trace", ""] {
            assert!(tracing_subscriber::EnvFilter::try_new(quiet_libraries(f)).is_ok(), "{f:?}");
        }
    }
}
