//! The composition root: opens the store, builds the [`State`], binds the listeners and the admin
//! socket, wires each to its handlers (`http`, `admin`), runs the background tasks, and stops
//! them in order. Nothing below it imports it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};

use crate::{admin, http, notify, reload};
use latchkey_domain::clock::{SharedClock, SystemClock};
use latchkey_domain::config::Config;
use latchkey_domain::crypto::Kek;
use latchkey_domain::metrics::Metrics;
use latchkey_domain::registry::{Loader, Registry};
use latchkey_domain::state::State;
use latchkey_domain::{audit, crypto, live, memory, oidc, ratelimit, social, tenants};
use latchkey_store as store;

/// Admin-socket connections served at once.
const ADMIN_MAX_CONNECTIONS: usize = 64;

/// How the caller wants the daemon run.
pub struct Options {
    pub clock: SharedClock,
    /// A listener bound by the caller (tests bind port 0 first so they know the URL).
    pub listener: Option<std::net::TcpListener>,
    /// Turns `true` to stop the daemon: it drains for `server.drain`, then stops.
    pub shutdown: watch::Receiver<bool>,
    /// Turns `true` to end a drain at once (a second SIGTERM or SIGINT).
    pub stop_now: Option<watch::Receiver<bool>>,
    /// Told once the daemon is ready.
    pub ready: Option<oneshot::Sender<Ready>>,
    /// Configurations read again on SIGHUP, to apply what can change without a restart.
    pub reload: Option<mpsc::Receiver<Config>>,
    /// Replaces the process's log filter (the subscriber is the caller's).
    pub log_filter: Option<live::LogFilterSetter>,
    /// While true, no tenant's first signing key is made (tests of tenants without one).
    pub hold_keys: Arc<std::sync::atomic::AtomicBool>,
    /// How long a token request waits for its tenant's first signing key.
    pub key_wait: std::time::Duration,
    /// While true, changes other nodes made are read but not applied (tests of a node that falls
    /// behind while its heartbeat goes on).
    pub hold_reloads: Arc<std::sync::atomic::AtomicBool>,
}

impl Options {
    pub fn new(shutdown: watch::Receiver<bool>) -> Options {
        Options {
            clock: Arc::new(SystemClock),
            listener: None,
            shutdown,
            stop_now: None,
            ready: None,
            reload: None,
            log_filter: None,
            hold_keys: Arc::default(),
            key_wait: oidc::keygen::WAIT,
            hold_reloads: Arc::default(),
        }
    }
}

/// What the daemon reports when it is ready: migrations applied, listener and socket bound.
#[derive(Debug, Clone)]
pub struct Ready {
    pub addr: SocketAddr,
    /// Where `/metrics` is served, if anywhere.
    pub metrics_addr: Option<SocketAddr>,
    pub admin_socket: PathBuf,
    /// Tenants that exist now, with their issuers.
    pub tenants: Vec<(String, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Crypto(#[from] crypto::CryptoError),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Socket(#[from] admin::SocketError),
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error(
        "cannot serve /metrics on {addr} (server.metrics_listen): {source}; choose another address, or \"\" to turn metrics off"
    )]
    Metrics { addr: SocketAddr, source: std::io::Error },
    #[error("{0}")]
    Setup(String),
}

/// Reloads the tenants other nodes changed (the batches of `store::cluster::Listener`), then
/// tells the listener, which reports this node up to date to the nodes waiting on it.
async fn apply_changes(
    state: Arc<State>,
    mut batches: mpsc::Receiver<store::cluster::Batch>,
    held: Arc<std::sync::atomic::AtomicBool>,
) {
    while let Some(batch) = batches.recv().await {
        if held.load(std::sync::atomic::Ordering::Acquire) {
            continue; // dropping `done`: not applied, read again at the next poll
        }
        // Before anything is reported applied: the changes are committed, and applications kept
        // in memory may predate them.
        state.db.others_changed();
        let slugs = if batch.full {
            // The journal was pruned past what this node applied: reload everything, including
            // tenants deleted meanwhile (refresh drops a slug the database no longer has).
            let mut all = state.registry.slugs();
            match tenants::list(&state.db).await {
                Ok(rows) => all.extend(rows.into_iter().map(|r| r.slug)),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot list tenants for a full reload; retrying");
                    continue;
                }
            }
            all.sort();
            all.dedup();
            all
        } else {
            batch.slugs
        };
        let mut applied = true;
        for slug in &slugs {
            if let Err(e) = state.registry.refresh(slug).await {
                tracing::warn!(tenant = %slug, error = %e, "cannot reload a tenant another node changed; retrying");
                applied = false;
            }
        }
        if !applied {
            // Not acknowledged: the listener reads the same changes again at its next poll, and
            // other nodes waiting for this one do not take it for up to date meanwhile.
            continue;
        }
        tracing::debug!(generation = batch.generation, tenants = slugs.len(), "applied changes from other nodes");
        let _ = batch.done.send(());
    }
}

/// The metrics listener of `server.metrics_listen`, bound. A port in use stops the start, except
/// under `--dev`, where a second development daemon (or anything else on the default port) should
/// not keep the quick start from running: there it is a warning, and no metrics.
fn bind_metrics(config: &Config) -> Result<Option<tokio::net::TcpListener>, StartError> {
    let Some(addr) = config.metrics_listen else { return Ok(None) };
    let bound = std::net::TcpListener::bind(addr).and_then(|l| {
        l.set_nonblocking(true)?;
        tokio::net::TcpListener::from_std(l)
    });
    match bound {
        Ok(l) => Ok(Some(l)),
        Err(e) if config.dev => {
            tracing::warn!(addr = %addr, error = %e, "cannot serve /metrics (server.metrics_listen); running without metrics");
            Ok(None)
        }
        Err(source) => Err(StartError::Metrics { addr, source }),
    }
}

/// Applies each configuration read again on SIGHUP, logging what changed and what did not.
async fn apply_reloads(
    state: Arc<State>,
    mut configs: mpsc::Receiver<Config>,
    tls: Option<live::TlsSlot>,
    log_filter: Option<live::LogFilterSetter>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let config = tokio::select! {
            c = configs.recv() => match c { Some(c) => c, None => return },
            _ = shutdown.changed() => return,
        };
        for warning in &config.warnings {
            tracing::warn!("{warning}");
        }
        match reload::apply(&state, &config, tls.as_ref(), log_filter.as_ref()) {
            Ok(report) => {
                let reloaded =
                    if report.reloaded.is_empty() { "nothing changed".to_owned() } else { report.reloaded.join("; ") };
                tracing::info!(reloaded = %reloaded, "configuration reloaded");
                if !report.needs_restart.is_empty() {
                    tracing::warn!(
                        settings = %report.needs_restart.join(", "),
                        "these settings changed but take effect only after a restart"
                    );
                }
            }
            Err(e) => tracing::error!(error = %e, "reload failed; keeping the current settings"),
        }
    }
}

/// Runs the daemon until `options.shutdown` turns true: opens the database (migrating it),
/// loads tenants, binds the listener and the admin socket, serves, then drains and cleans up.
pub async fn run(config: Config, options: Options) -> Result<(), StartError> {
    // Beside the start, at normal priority: see `seed_random`.
    crypto::seed_random();
    let config = Arc::new(config);
    let tls: Option<live::TlsSlot> = match &config.tls {
        Some(t) => {
            let server = crate::certs::server_config(&t.cert, &t.key).map_err(StartError::Setup)?;
            Some(Arc::new(live::Slot::from_arc(server)))
        }
        None => None,
    };
    if tls.is_none() && config.public_url.scheme() == "https" {
        tracing::warn!("public_url is https but latchkeyd serves plain HTTP: put a TLS-terminating proxy in front");
    }
    let location = config.store_location();
    // A database without its key-encryption key is refused before anything is created, not even
    // the lock file; on PostgreSQL read, not migrated, so a node refused for its missing key
    // changes nothing, not even the schema of a database other nodes may still run on.
    if !config.kek_file.exists() && location.holds_sealed_keys()? {
        let restore = if location.is_shared() {
            "Restore the key file from your backup or copy it from a running node (every node needs the same \
             file), then start again"
        } else {
            "Restore the key file from your backup (or point keys.encryption_key_file at it)"
        };
        return Err(StartError::Setup(format!(
            "the database {} holds signing keys but their key-encryption key {} does not exist: a new key could \
             not decrypt them. {restore}",
            location.describe(),
            config.kek_file.display()
        )));
    }
    // Before anything is created or opened: a second daemon on this SQLite file changes nothing.
    let _lock = location.lock().map_err(StartError::Setup)?;
    let db = location.open()?;
    let kek = Arc::new(Kek::load_or_create(&config.kek_file)?);
    // Ready before the tenants load (on SQLite, the spare the previous run kept at shutdown),
    // else generated on an otherwise idle core meanwhile: the first tenant created (or key
    // rotated) after the start takes this key instead of waiting for a generation.
    let spare_keys = Arc::new(match location.sqlite_path() {
        Some(path) => oidc::spare::SpareKeys::with_reserve(oidc::spare_file::SpareFile::beside(path, kek.clone())),
        None => oidc::spare::SpareKeys::default(),
    });
    spare_keys.prefill(config.rsa_bits);

    let std_listener = match options.listener {
        Some(l) => l,
        None => std::net::TcpListener::bind(config.listen)
            .map_err(|source| StartError::Listen { addr: config.listen, source })?,
    };
    let listen_addr = std_listener.local_addr().map_err(|source| StartError::Listen { addr: config.listen, source })?;
    std_listener.set_nonblocking(true).map_err(|source| StartError::Listen { addr: listen_addr, source })?;
    let tcp = tokio::net::TcpListener::from_std(std_listener)
        .map_err(|source| StartError::Listen { addr: listen_addr, source })?;

    let metrics_tcp = bind_metrics(&config)?;
    let metrics_addr = metrics_tcp.as_ref().and_then(|l| l.local_addr().ok());

    let settings = live::Live::from_config(&config).map_err(StartError::Setup)?;
    let rsa_engine = oidc::signer::effective(config.rsa_engine);
    if rsa_engine != config.rsa_engine {
        tracing::warn!(
            "signing.rsa_engine = {:?} needs a CPU with AVX-512 IFMA (avx512f, avx512vl, avx512ifma), which this \
             one lacks: tokens are signed with aws-lc",
            config.rsa_engine.as_str()
        );
    }
    tracing::info!(rsa_engine = rsa_engine.as_str(), "RS256 token signatures: {}", oidc::signer::describe(rsa_engine));
    let (audit_log, audit_task) = audit::AuditLog::start(db.clone());
    let registry = Registry::new(Loader {
        db: db.clone(),
        kek: kek.clone(),
        public_url: config.public_base(),
        engine: rsa_engine,
    });
    let state = Arc::new(State {
        config: config.clone(),
        db,
        kek,
        clock: options.clock.clone(),
        registry,
        metrics: Metrics::default(),
        limiter: ratelimit::RateLimiter::default(),
        audit: audit_log,
        live: live::Slot::new(settings),
        log_filter: live::Slot::new(config.log_filter.clone()),
        upstream: social::client::Upstream::new().map_err(StartError::Setup)?,
        social_cache: social::oidc::Cache::default(),
        started: Instant::now(),
        listen_addr,
        spare_keys,
        rsa_engine,
        dpop_spent: latchkey_domain::oidc::dpop::Spent::new(options.clock.now()),
        keygen: Arc::new(oidc::keygen::KeyMaker::new(options.hold_keys.clone(), options.key_wait)),
        draining: Default::default(),
    });
    let generation =
        state.registry.load_all().await.map_err(|e| {
            StartError::Setup(format!("loading tenants: {e} ({})", e.cause.clone().unwrap_or_default()))
        })?;
    // A tenant on the public URL's host but outside it (the data moved to another port or path)
    // answers at no address this daemon is asked at: say how to move it.
    for slug in state.registry.slugs() {
        if let Some(t) = state.registry.get(&slug).filter(|t| t.outside_public_url()) {
            tracing::warn!(
                tenant = %t.slug,
                base_url = %t.base_url,
                public_url = %config.public_base(),
                "tenant is outside public_url and not on a domain of its own: requests to public_url do not reach \
                 it; to move it: latchkey tenant update {} --base-url {}/{}",
                t.slug,
                config.public_base(),
                t.slug
            );
        }
    }
    // Several nodes on PostgreSQL: apply the changes other nodes make to tenants and keys.
    let listener = match state.db.listen_to_other_nodes(generation)? {
        Some((listener, batches)) => {
            tokio::spawn(apply_changes(state.clone(), batches, options.hold_reloads.clone()));
            Some(listener)
        }
        None => None,
    };

    // Tenants created without a signing key (by `apply`, or before a stop) get theirs now, in the
    // background.
    oidc::keygen::start(&state).await.map_err(|e| StartError::Setup(format!("finding tenants without keys: {e}")))?;
    // Its threads stop however this function returns (a start that fails below too).
    let _keygen = StopOnDrop(state.keygen.clone());

    if config.dev && state.registry.is_empty() {
        let req = latchkey::admin::CreateTenant { slug: "dev".into(), ..Default::default() };
        tenants::create(&state, req).await.map_err(|e| StartError::Setup(format!("creating tenant dev: {e}")))?;
    }

    let unix = admin::bind(&config.admin_socket, config.socket_mode)?;
    let allowed_uids = config.allowed_uids.clone().unwrap_or_else(admin::default_allowed_uids);

    // What the listeners and background tasks stop on: after the drain (see `drain_then_stop`).
    let (stop_tx, shutdown) = watch::channel(false);
    tokio::spawn(drain_then_stop(state.clone(), options.shutdown, options.stop_now, stop_tx));
    let public = {
        let state = state.clone();
        let counted = state.clone();
        let capacity = http::Capacity {
            max_connections: config.max_connections,
            on_refused: Box::new(move || counted.metrics.connection_refused()),
        };
        // HSTS only where this daemon terminates TLS itself (see `http::public::handle`).
        let hsts = tls.as_ref().and_then(|_| {
            hyper::header::HeaderValue::from_str(&format!("max-age={}", config.hsts_max_age.as_secs())).ok()
        });
        let handler = move |req, peer| http::public::handle(state.clone(), hsts.clone(), req, peer);
        match &tls {
            Some(tls) => tokio::spawn(http::serve(
                http::tls::TlsAcceptor::new(tcp, tls.clone()),
                handler,
                shutdown.clone(),
                "public",
                capacity,
            )),
            None => tokio::spawn(http::serve(http::TcpAcceptor(tcp), handler, shutdown.clone(), "public", capacity)),
        }
    };
    let admin_task = {
        let state = state.clone();
        let handler = move |req, peer| admin::handle(state.clone(), req, peer);
        let acceptor = admin::AdminAcceptor { listener: unix, allowed_uids };
        // Operators and scripts: a handful of connections at a time is plenty.
        let capacity = http::Capacity { max_connections: ADMIN_MAX_CONNECTIONS, on_refused: Box::new(|| {}) };
        tokio::spawn(http::serve(acceptor, handler, shutdown.clone(), "admin", capacity))
    };

    let metrics_task = metrics_tcp.map(|tcp| {
        let state = state.clone();
        let handler = move |req, peer| http::scrape::handle(state.clone(), req, peer);
        // A scraper or two: a few connections at a time.
        let capacity = http::Capacity { max_connections: 16, on_refused: Box::new(|| {}) };
        tokio::spawn(http::serve(http::TcpAcceptor(tcp), handler, shutdown.clone(), "metrics", capacity))
    });

    let sweeper = tokio::spawn(latchkey_domain::sweeper::run(state.clone(), shutdown.clone()));
    let outbox = tokio::spawn(latchkey_domain::outbox::run(state.clone(), shutdown.clone()));
    if let Some(configs) = options.reload {
        tokio::spawn(apply_reloads(state.clone(), configs, tls, options.log_filter, shutdown.clone()));
    }
    tokio::spawn(memory::trim_periodically(shutdown.clone()));

    let tenants_now: Vec<(String, String)> = tenants::list(&state.db)
        .await
        .map_err(|e| StartError::Setup(format!("listing tenants: {e}")))?
        .into_iter()
        .map(|t| (t.slug, t.base_url))
        .collect();
    let metrics_shown = metrics_addr.map(|a| a.to_string()).unwrap_or_else(|| "off".into());
    tracing::info!(addr = %listen_addr, socket = %config.admin_socket.display(), metrics = %metrics_shown, tenants = tenants_now.len(), "ready");
    notify::notify("READY=1");
    if let Some(tx) = options.ready {
        let _ = tx.send(Ready {
            addr: listen_addr,
            metrics_addr,
            admin_socket: config.admin_socket.clone(),
            tenants: tenants_now,
        });
    }

    let _ = public.await;
    let _ = admin_task.await;
    if let Some(task) = metrics_task {
        let _ = task.await;
    }
    let _ = sweeper.await;
    let _ = outbox.await;
    if let Some(listener) = listener {
        // Joining the listener thread blocks for up to one poll interval.
        let _ = tokio::task::spawn_blocking(move || listener.stop()).await;
    }
    // An unused spare signing key waits for the next start (SQLite), which then generates none.
    let spare = state.spare_keys.clone();
    let bits = config.rsa_bits;
    let _ = tokio::task::spawn_blocking(move || spare.keep(bits)).await;
    // Everything recorded before shutdown is written before the process ends.
    state.audit.flush().await;
    audit_task.abort();
    if let Err(e) = state.db.checkpoint_for_stop().await {
        // Nothing is lost: the next start reads the rest from the WAL.
        tracing::warn!(error = %e, "could not copy the WAL into the database file at shutdown");
    }
    notify::notify("STOPPING=1");
    if let Err(e) = std::fs::remove_file(&config.admin_socket) {
        tracing::warn!(error = %e, "could not remove the admin socket");
    }
    tracing::info!("stopped");
    Ok(())
}

/// Waits for the stop asked for, then drains: `/readyz` answers 503 for `server.drain` while
/// everything is still served (responses say `Connection: close`, so that clients reconnect
/// through the load balancer, which by then sends them elsewhere); then tells everything to stop.
/// A second signal (`stop_now`) ends the drain at once.
async fn drain_then_stop(
    state: Arc<State>,
    mut asked: watch::Receiver<bool>,
    stop_now: Option<watch::Receiver<bool>>,
    stop: watch::Sender<bool>,
) {
    // A dropped sender stops the daemon too, as it always did.
    let _ = asked.wait_for(|stop| *stop).await;
    let drain = state.config.drain;
    if !drain.is_zero() {
        state.draining.store(true, std::sync::atomic::Ordering::Release);
        // Under systemd: stopping, and the unit's TimeoutStopSec counts from the drain's end
        // (the drain, then the grace for requests in flight, then the rest of the stop).
        let more = drain + http::DRAIN_DEADLINE + Duration::from_secs(5);
        notify::notify(&format!("STOPPING=1\nEXTEND_TIMEOUT_USEC={}", more.as_micros()));
        tracing::info!(seconds = drain.as_secs_f64(), "draining: /readyz answers 503 while requests are still served");
        let now = async {
            match stop_now {
                Some(mut now) => {
                    let _ = now.wait_for(|stop| *stop).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(drain) => {}
            _ = now => tracing::info!("asked again: stopping without waiting for the rest of the drain"),
        }
    }
    let _ = stop.send(true);
}

/// Stops the threads that make tenants' first keys when dropped.
struct StopOnDrop(Arc<oidc::keygen::KeyMaker>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}
