//! `latchkeyd` entry point: arguments, logging, runtime, signals. Everything else is in the library.

use std::process::ExitCode;

use clap::Parser;
use latchkeyd::args::{Args, Command};
use latchkeyd::config::{Config, LogFormat, Overrides};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{oneshot, watch};

fn main() -> ExitCode {
    let args = Args::parse();
    let flags = Overrides {
        config: args.config.clone(),
        dev: args.dev,
        listen: args.listen.clone(),
        data_dir: args.data_dir.clone(),
    };
    let config = match Config::load(&flags, std::env::vars()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("latchkeyd: {e}");
            return ExitCode::from(1);
        }
    };
    if let Some(Command::CheckConfig) = args.command {
        print!("{}", config.to_toml());
        eprintln!("latchkeyd: configuration is valid");
        return ExitCode::SUCCESS;
    }
    init_logging(config.log_format);

    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("latchkeyd: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        let (stop_tx, stop_rx) = watch::channel(false);
        let (ready_tx, ready_rx) = oneshot::channel();
        let dev = config.dev;
        let mut options = latchkeyd::Options::new(stop_rx);
        options.ready = Some(ready_tx);
        let daemon = tokio::spawn(latchkeyd::run(config, options));

        tokio::spawn(async move {
            if let Ok(ready) = ready_rx.await
                && dev
            {
                print_dev_banner(&ready);
            }
        });
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("shutting down: finishing in-flight requests");
            let _ = stop_tx.send(true);
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

async fn wait_for_signal() {
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        // Without signal handlers the daemon can still be stopped by SIGKILL; say so and wait.
        eprintln!("latchkeyd: cannot install signal handlers");
        return std::future::pending().await;
    };
    // SIGHUP must not end the daemon (its default action would, leaving the socket behind). This
    // version reloads nothing yet: say so, keep serving with the settings it has.
    let mut hup = signal(SignalKind::hangup()).ok();
    loop {
        tokio::select! {
            _ = term.recv() => return,
            _ = int.recv() => return,
            Some(()) = async { match hup.as_mut() { Some(h) => h.recv().await, None => std::future::pending().await } } => {
                tracing::warn!("SIGHUP: this version reloads nothing; restart latchkeyd to apply configuration changes");
            }
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("LATCHKEYD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colour only for a person at a terminal; journald and log files get plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match format {
        LogFormat::Json => builder.json().flatten_event(true).init(),
        LogFormat::Text => builder.with_target(false).init(),
    }
}

fn print_dev_banner(ready: &latchkeyd::Ready) {
    let socket = ready.admin_socket.display();
    println!("latchkeyd is running in development mode (embedded defaults, data in ./latchkey-data)");
    println!();
    for (slug, issuer) in &ready.tenants {
        println!("  tenant {slug:<10} issuer {issuer}");
        println!("                    discovery {issuer}/.well-known/openid-configuration");
    }
    println!("  admin socket      {socket}");
    println!();
    println!("Next, in another terminal in this directory:");
    println!("  latchkey status");
    println!("  latchkey tenant create acme");
    println!(
        "  latchkey app create --tenant acme --name \"My App\" --type web --redirect-uri http://localhost:3000/oidc-callback"
    );
    println!("  latchkey key list --tenant acme");
    println!();
    println!("Stop with Ctrl-C.");
}
