//! What a bulk run is made of: its rows in batches ([`BATCH`], [`batches`]), what one batch did
//! ([`Batch`]), and how each batch is handled ([`Steps`]: stored, or only previewed). The runs
//! themselves are [`super::bulk`]'s; the calls define their steps beside their rows
//! (`import::steps`, `reinvite::steps`).

use latchkey::admin::InvitedRow;
use tokio::sync::mpsc;

use crate::clock::Timestamp;
use crate::error::Error;
use crate::store::tenants::TenantRow;
use crate::store::{ReadTx, TenantId, WriteTx};

/// Rows per write transaction. Each commit writes every index page its rows touched: new users'
/// ids, handles and token keys begin with the time and append (`ids`), and an import's rows come
/// in address order, so the e-mail index's pages are each written about once. Small enough to
/// hold the writer for about 0.1 s (other writes wait behind it), to send a progress line as
/// often, and to keep a bounded batch in memory.
pub const BATCH: usize = 10_000;

/// `items` in batches of [`BATCH`], read on a blocking thread (a file's rows, or a list in hand);
/// the first error ends them.
pub fn batches<T, I>(items: I) -> mpsc::Receiver<Result<Vec<T>, Error>>
where
    T: Send + 'static,
    I: IntoIterator<Item = Result<T, Error>> + Send + 'static,
    I::IntoIter: Send,
{
    let (tx, rx) = mpsc::channel(1);
    tokio::task::spawn_blocking(move || {
        let mut batch = Vec::with_capacity(BATCH);
        for item in items {
            let full = match item {
                Ok(r) => {
                    batch.push(r);
                    batch.len() == BATCH
                }
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    return;
                }
            };
            if full && tx.blocking_send(Ok(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))).is_err() {
                return;
            }
        }
        if !batch.is_empty() {
            let _ = tx.blocking_send(Ok(batch));
        }
    });
    rx
}

/// What one batch did.
pub trait Batch: Default + Send + 'static {
    /// The invitations it made, e-mailed before its line is sent.
    fn invited(&mut self) -> &mut Vec<InvitedRow>;
    /// How many of its rows were left alone (already present, or skipped).
    fn others(&self) -> usize;
}

/// Stores a batch of `T` in a write transaction, adding what it did to `O`.
pub trait StoreStep<T, O>: Fn(&WriteTx<'_>, &[T], &mut O) -> Result<(), Error> + Clone + Send + 'static {}
impl<T, O, F> StoreStep<T, O> for F where F: Fn(&WriteTx<'_>, &[T], &mut O) -> Result<(), Error> + Clone + Send + 'static
{}

/// Says in a read transaction what storing a batch of `T` would do, adding it to `O`.
pub trait PreviewStep<T, O>: Fn(&ReadTx<'_>, &[T], &mut O) -> Result<(), Error> + Clone + Send + 'static {}
impl<T, O, F> PreviewStep<T, O> for F where
    F: Fn(&ReadTx<'_>, &[T], &mut O) -> Result<(), Error> + Clone + Send + 'static
{
}

/// How each batch is handled: stored in a write transaction, or previewed in a read one.
pub struct Steps<W, P> {
    pub store: W,
    pub preview: P,
    pub dry_run: bool,
}

/// How a call stores a batch of `T` for a tenant: `(tx, tenant, base_url, rows, now, expires_at,
/// done)`, the links it makes valid until `expires_at`.
pub type StoreRows<T, O> = fn(&WriteTx<'_>, TenantId, &str, &[T], Timestamp, Timestamp, &mut O) -> Result<(), Error>;

/// How a call previews a batch of `T` for a tenant: `(tx, tenant, rows, done)`.
pub type PreviewRows<T, O> = fn(&ReadTx<'_>, TenantId, &[T], &mut O) -> Result<(), Error>;

impl Steps<(), ()> {
    /// The steps of a call that invites (import, reinvite) for `tenant`: `store` with links valid
    /// until `expires_at`, or, with `dry_run`, `preview`.
    pub fn for_tenant<T: 'static, O: 'static>(
        tenant: &TenantRow,
        now: Timestamp,
        expires_at: Timestamp,
        dry_run: bool,
        store: StoreRows<T, O>,
        preview: PreviewRows<T, O>,
    ) -> Steps<impl StoreStep<T, O>, impl PreviewStep<T, O>> {
        let (id, base_url) = (tenant.id, tenant.base_url.clone());
        Steps {
            store: move |tx: &WriteTx<'_>, rows: &[T], o: &mut O| store(tx, id, &base_url, rows, now, expires_at, o),
            preview: move |tx: &ReadTx<'_>, rows: &[T], o: &mut O| preview(tx, id, rows, o),
            dry_run,
        }
    }
}
