//! A tenant's attestation policy (`latchkey tenant update --attestation-policy verified`,
//! `--allowed-aaguid`) and the FIDO metadata it trusts (`latchkey mds import|status`).
//!
//! Under `verified`, a registration is accepted only when the authenticator's attestation
//! (verified by webauthn-rs: its signature by the first certificate) chains to a root that the
//! imported metadata lists for the authenticator's AAGUID, the status in force for that AAGUID is
//! not revoked or compromised, and the AAGUID is on the tenant's list when it keeps one. Anything
//! else is refused with `authenticator_not_allowed`: the policy fails closed.

use latchkey::admin::{AttestationPolicy, ImportMds, MdsStatus};
use latchkey::codes;
use webauthn_rs::prelude::Uuid;
use x509_cert::Certificate;

use super::mds;
use crate::error::{Error, Kind};
use crate::state::State;
use crate::store::tenants::Attestation;
use crate::store::{self, Db, Reader};

fn refused(message: String) -> Error {
    Error::new(Kind::Forbidden, codes::AUTHENTICATOR_NOT_ALLOWED, message)
}

/// Checks and normalises a list of AAGUIDs (`--allowed-aaguid`): lower case, without repeats.
pub fn checked_aaguids(list: &[String]) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = vec![];
    for a in list {
        let shown: String = a.chars().take(40).collect();
        let uuid = Uuid::try_parse(a.trim()).map_err(|_| {
            Error::invalid(
                codes::INVALID_INPUT,
                format!("allowed AAGUID {shown:?} is not an AAGUID like cb69481e-8ff7-4039-93ec-0a2729a154a8"),
            )
        })?;
        let text = uuid.hyphenated().to_string();
        if !out.contains(&text) {
            out.push(text);
        }
    }
    Ok(out)
}

/// Refuses a registration the tenant's policy does not accept. `object` is the attestation
/// object webauthn-rs has just verified; `aaguid` the one its authenticator data names.
pub fn check(
    tx: &impl Reader,
    policy: &Attestation,
    object: &[u8],
    aaguid: Option<[u8; 16]>,
    now: i64,
) -> Result<(), Error> {
    if policy.policy == AttestationPolicy::Any {
        return Ok(());
    }
    let (fmt, x5c) = super::authdata::attestation_certificates(object)
        .ok_or_else(|| refused("the attestation object does not parse".into()))?;
    let aaguid = match aaguid {
        Some(a) if a != [0; 16] => super::device::format_aaguid(&a),
        _ => {
            return Err(refused(
                "this organisation accepts only authenticators it can identify, and this one gives no model \
                 (AAGUID); use a security key or device your organisation approved"
                    .into(),
            ));
        }
    };
    if x5c.is_empty() {
        return Err(refused(format!(
            "this organisation accepts only authenticators that prove their model, and this one ({aaguid}) sent \
             {} attestation; use a security key or device your organisation approved",
            if fmt == "none" { "no".to_owned() } else { format!("a self-signed {fmt:?}") }
        )));
    }
    if !policy.allowed_aaguids.is_empty() && !policy.allowed_aaguids.contains(&aaguid) {
        return Err(refused(format!(
            "authenticator model {aaguid} is not on this organisation's list of allowed authenticators"
        )));
    }
    let entry = store::mds::entry(tx, &aaguid)?.ok_or_else(|| {
        refused(format!(
            "authenticator model {aaguid} is not in the FIDO metadata this server trusts; an administrator can \
             import fresh metadata (latchkey mds import) or use another authenticator"
        ))
    })?;
    if mds::refused_status(&entry.status) {
        return Err(refused(format!(
            "authenticator model {aaguid} ({}) has the status {} in the FIDO metadata: it is not accepted",
            entry.description, entry.status
        )));
    }
    let now = u64::try_from(now).unwrap_or(0);
    mds::attested_by(&x5c, &entry.roots, now).map_err(|e| {
        refused(format!(
            "the attestation of authenticator model {aaguid} ({}) is not from its maker: {e}",
            entry.description
        ))
    })
}

fn status_of(tx: &impl Reader) -> Result<Option<MdsStatus>, Error> {
    let Some(blob) = store::mds::blob(tx)? else { return Ok(None) };
    let statuses = store::mds::statuses(tx)?;
    Ok(Some(MdsStatus {
        serial: blob.serial,
        next_update: blob.next_update,
        sha256: blob.sha256,
        imported: crate::clock::rfc3339(blob.imported_at),
        authenticators: statuses.len() as u64,
        refused: statuses.iter().filter(|(_, s)| mds::refused_status(s)).count() as u64,
    }))
}

/// The metadata in force (`latchkey mds status`), `None` before the first import.
pub async fn status(db: &Db) -> Result<Option<MdsStatus>, Error> {
    db.read(|tx| status_of(tx)).await
}

fn invalid(message: String) -> Error {
    Error::invalid(codes::INVALID_METADATA, message)
}

/// Verifies a BLOB (`latchkey mds import FILE`) and, when it is newer than the one in force (or
/// `force`), replaces the metadata with it in one transaction. A BLOB that does not verify
/// changes nothing.
pub async fn import(state: &State, req: ImportMds) -> Result<MdsStatus, Error> {
    if req.blob.len() > mds::MAX_BLOB_BYTES {
        return Err(invalid(format!("the BLOB is larger than {} MiB", mds::MAX_BLOB_BYTES >> 20)));
    }
    let roots: Vec<Certificate> = if req.roots.is_empty() {
        mds::certificates(mds::FIDO_ROOT_PEM.as_bytes()).map_err(Error::internal)?
    } else {
        let mut all = vec![];
        for pem in &req.roots {
            all.extend(mds::certificates(pem.as_bytes()).map_err(|e| invalid(format!("a root: {e}")))?);
        }
        all
    };
    let now = state.clock.now();
    let force = req.force;
    // Parsing and checking a BLOB of a few MiB takes a while: off the request threads.
    let (blob, sha256) = tokio::task::spawn_blocking(move || {
        let blob = mds::verify(&req.blob, &roots, u64::try_from(now).unwrap_or(0))
            .map_err(|e| invalid(format!("the metadata BLOB was refused: {e}")))?;
        Ok::<_, Error>((blob, crate::crypto::hex(&crate::crypto::sha256(req.blob.trim().as_bytes()))))
    })
    .await
    .map_err(Error::internal)??;
    state
        .db
        .write(move |tx| -> Result<MdsStatus, Error> {
            if let Some(cur) = store::mds::blob(tx)?
                && blob.serial <= cur.serial
                && !force
            {
                return Err(Error::conflict(
                    codes::METADATA_NOT_NEWER,
                    format!(
                        "this BLOB's serial number {} is not above the imported one's ({}): an older BLOB may \
                         not list a revocation; repeat with --force to take it anyway",
                        blob.serial, cur.serial
                    ),
                ));
            }
            let row = store::mds::BlobRow {
                serial: blob.serial,
                next_update: blob.next_update.clone(),
                sha256,
                imported_at: now,
            };
            let entries: Vec<store::mds::EntryRow> = blob
                .entries
                .iter()
                .map(|e| store::mds::EntryRow {
                    aaguid: e.aaguid.clone(),
                    description: e.description.clone(),
                    status: e.status.clone(),
                    roots: e.roots.clone(),
                })
                .collect();
            store::mds::replace(tx, &row, &entries)?;
            status_of(tx)?.ok_or_else(|| Error::internal("the metadata just stored is not there"))
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aaguids_are_checked_and_normalised() {
        let list =
            vec!["CB69481E-8FF7-4039-93EC-0A2729A154A8".to_owned(), "cb69481e-8ff7-4039-93ec-0a2729a154a8".into()];
        assert_eq!(checked_aaguids(&list).unwrap(), vec!["cb69481e-8ff7-4039-93ec-0a2729a154a8".to_owned()]);
        let err = checked_aaguids(&["yubikey".into()]).unwrap_err();
        assert_eq!(err.code, codes::INVALID_INPUT);
    }
}
