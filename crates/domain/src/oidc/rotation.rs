//! Key lifecycle, per algorithm: the `current` key of each algorithm signs (RS256 always; ES256
//! and EdDSA once `key rotate --alg` added them); `key rotate` makes a new key current at once and
//! keeps the old one of its algorithm published as `previous` (tokens it signed still verify);
//! `key retire KID` deletes a previous key and its private key for good, taking it out of the
//! JWKS. A retired key is gone, so no list shows a `retired` state.

use latchkey::admin::{Key, KeyState, SigningAlg};
use latchkey::codes;

use crate::clock::date;
use crate::error::Error;
use crate::state::State;
use crate::store;
use crate::store::keys::KeyRow;
use crate::tenants::{require, seal_key};

fn to_wire(row: &KeyRow) -> Key {
    Key {
        kid: row.kid.clone(),
        state: row.state,
        algorithm: row.alg.as_str().into(),
        bits: row.bits,
        created: date(row.created_at),
    }
}

/// The tenant's keys. A tenant whose first key is still being made has it made now and waits
/// for it (as a token request does): what an operator lists is never a passing state.
pub async fn list(state: &State, slug: String) -> Result<Vec<Key>, Error> {
    first_key(state, &slug).await?;
    state
        .db
        .read(move |tx| -> Result<_, Error> {
            let tenant = require(tx, &slug)?;
            Ok(store::keys::list(tx, tenant.id)?.iter().map(to_wire).collect())
        })
        .await
}

/// Generates a key of `alg`, makes it the current one of its algorithm, and refreshes what the
/// tenant serves. Returns the new key. The first ES256 or EdDSA key adds that algorithm.
///
/// Two steps, so that a relying party never meets a token signed by a key it cannot find: the
/// key is first published (in the JWKS of every node: on PostgreSQL, [`Db::wait_published`]
/// waits for the other nodes to reload), and only then made current.
///
/// [`Db::wait_published`]: crate::store::Db::wait_published
pub async fn rotate(state: &State, slug: String, alg: SigningAlg) -> Result<Key, Error> {
    // An RS256 rotation follows the tenant's first key, so that it leaves that key behind as the
    // previous one, as every rotation does.
    if alg == SigningAlg::RS256 {
        first_key(state, &slug).await?;
    }
    let (generated, bits) = match alg {
        SigningAlg::RS256 => (state.spare_keys.take(state.config.rsa_bits).await?, state.config.rsa_bits),
        _ => (crate::oidc::keys::generate_for(alg, 0)?, crate::oidc::keys::CURVE_BITS),
    };
    let kek = state.kek.clone();
    let now = state.clock.now();
    let kid = generated.kid.clone();
    let s = slug.clone();
    state
        .db
        .write(move |tx| -> Result<_, Error> {
            store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &s)?;
            let row = seal_key(&kek, tenant.id, &generated, bits, now)?;
            Ok(store::keys::insert_published(tx, tenant.id, &row)?)
        })
        .await?;
    state.registry.publish(&slug).await?;
    let s = slug.clone();
    let key = state
        .db
        .write(move |tx| -> Result<_, Error> {
            store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &s)?;
            // A tenant whose first key was being made may have had this key promoted by that
            // work (`keygen::install` finishes a published key it finds): current all the same.
            let promoted = store::keys::promote(tx, tenant.id, &kid, now)?;
            let rows = store::keys::list(tx, tenant.id)?;
            if !promoted && !rows.iter().any(|r| r.kid == kid && r.state == KeyState::Current) {
                return Err(Error::conflict(
                    codes::KEY_NOT_FOUND,
                    format!(
                        "the new key {kid:?} was retired before it could sign; run `latchkey key rotate --tenant {s}{}` \
                         again",
                        alg_flag(alg)
                    ),
                ));
            }
            rows.iter()
                .find(|r| r.kid == kid)
                .map(to_wire)
                .ok_or_else(|| Error::internal("new key not found after insert"))
        })
        .await?;
    state.registry.publish(&slug).await?;
    Ok(key)
}

/// Waits for the tenant's first RS256 key, made now if it is still queued
/// ([`crate::oidc::keygen`]). A tenant that does not exist is left for the caller to refuse.
async fn first_key(state: &State, slug: &str) -> Result<(), Error> {
    match state.registry.get(slug) {
        Some(tenant) => crate::oidc::keygen::ready_to_sign(state, tenant).await.map(drop),
        None => Ok(()),
    }
}

/// ` --alg X` for a key of another algorithm than the default.
fn alg_flag(alg: SigningAlg) -> String {
    if alg == SigningAlg::RS256 { String::new() } else { format!(" --alg {alg}") }
}

/// Deletes a previous key. The current key of an algorithm cannot be retired: rotate first.
pub async fn retire(state: &State, slug: String, kid: String) -> Result<Vec<Key>, Error> {
    let s = slug.clone();
    let left = state
        .db
        .write(move |tx| -> Result<_, Error> {
            store::cluster::admin_lock(tx)?;
            let tenant = require(tx, &s)?;
            let rows = store::keys::list(tx, tenant.id)?;
            match rows.iter().find(|r| r.kid == kid) {
                None => {
                    return Err(Error::not_found(
                        codes::KEY_NOT_FOUND,
                        format!("no key {kid:?} in tenant {s:?}; `latchkey key list --tenant {s}` shows them"),
                    ));
                }
                Some(r) if r.state == KeyState::Current => {
                    return Err(Error::conflict(
                        codes::KEY_IS_CURRENT,
                        format!(
                            "key {kid:?} is the current {} signing key; run `latchkey key rotate --tenant {s}{}` first",
                            r.alg,
                            alg_flag(r.alg)
                        ),
                    ));
                }
                Some(_) => {}
            }
            store::keys::delete_previous(tx, tenant.id, &kid)?;
            Ok(store::keys::list(tx, tenant.id)?.iter().map(to_wire).collect())
        })
        .await?;
    state.registry.publish(&slug).await?;
    Ok(left)
}
