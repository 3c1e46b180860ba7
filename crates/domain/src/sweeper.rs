//! The sweeper: once a minute, rows whose time is up leave the database (challenges, sessions,
//! codes, device codes, social flows, old tenant URLs, the audit trail past its retention). On
//! PostgreSQL one node sweeps for the whole cluster.

use std::sync::Arc;

use tokio::sync::watch;

use crate::state::State;
use crate::store::{self, StoreError};

/// Sweeps every minute until `shutdown` turns.
pub async fn run(state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.changed() => return,
        }
        let now = state.clock.now();
        let retention_secs = state.config.audit_retention.as_secs() as i64;
        let swept = state
            .db
            .write(move |tx| -> Result<usize, StoreError> {
                // On PostgreSQL one node sweeps, about once a minute for the whole cluster.
                if !store::cluster::claim_job(tx, "sweep", 55)? {
                    return Ok(0);
                }
                let retention = now - retention_secs;
                Ok(store::cluster::sweep(tx)?
                    + store::challenges::sweep(tx, now)?
                    + store::sessions::sweep(tx, now)?
                    + store::oidc::sweep(tx, now)?
                    + store::pushed::sweep(tx, now)?
                    + store::client_assertions::sweep(tx, now)?
                    + store::dpop_proofs::sweep(tx, now)?
                    + store::device::sweep(tx, now)?
                    + store::social::sweep(tx, now)?
                    + store::tenants::sweep_old_urls(tx, now)?.len()
                    + store::outbox::sweep(tx, now)?
                    + store::audit::sweep(tx, retention)?)
            })
            .await;
        match swept {
            Ok(0) => {}
            Ok(n) => tracing::debug!(rows = n, "swept expired challenges and sessions"),
            Err(e) => tracing::warn!(error = %e, "sweeping expired rows failed"),
        }
    }
}
