//! Fresh invitation links for users who have not registered yet (`latchkey user reinvite`): a
//! lost or expired link is replaced, and the user's older links stop working.

use std::collections::HashSet;

use latchkey::admin::{InvitedRow, Reinvite, SkippedUser};
use latchkey::codes;

use super::issue_token;
use crate::clock::Timestamp;
use crate::error::Error;
use crate::store::tenants::TenantRow;
use crate::store::users::{UserRow, normalise_email};
use crate::store::{self, Db, InvitePurpose, ReadTx, Reader, TenantId, UserStatus, WriteTx};
use crate::users::batch::{Batch, PreviewStep, Steps, StoreStep};

/// The request names users, or asks for every pending one; not both, not neither.
pub fn validate(req: &Reinvite) -> Result<(), Error> {
    match (req.emails.is_empty(), req.all_pending) {
        (true, false) => Err(Error::invalid(
            codes::INVALID_INPUT,
            "name the users to reinvite (emails), or ask for every invited user (all_pending: true)",
        )),
        (false, true) => Err(Error::invalid(codes::INVALID_INPUT, "give either emails or all_pending: true, not both")),
        _ => Ok(()),
    }
}

/// The e-mails to handle, in order: the named ones (each once, as first written), or every
/// user of the tenant who is still `invited`.
pub fn targets(tx: &impl Reader, tenant: TenantId, req: &Reinvite) -> Result<Vec<String>, Error> {
    if req.all_pending {
        return Ok(store::users::emails_with_status(tx, tenant, UserStatus::Invited)?);
    }
    let mut seen = HashSet::new();
    Ok(req.emails.iter().map(|e| e.trim().to_owned()).filter(|e| seen.insert(normalise_email(e))).collect())
}

/// The user `email` names if they may get a new link, else why not.
fn pending(tx: &impl Reader, tenant: TenantId, email: &str) -> Result<Result<UserRow, String>, Error> {
    let Some(user) = store::users::by_email(tx, tenant, email)? else {
        return Ok(Err("no such user in this tenant".into()));
    };
    Ok(match user.status {
        UserStatus::Invited => Ok(user),
        UserStatus::Active => {
            Err("already active: they sign in with their passkey (a lost device needs `latchkey user recover`)".into())
        }
        UserStatus::Disabled => Err("disabled: enable the account first".into()),
    })
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub invited: Vec<InvitedRow>,
    pub skipped: Vec<SkippedUser>,
}

impl Batch for Outcome {
    fn invited(&mut self) -> &mut Vec<InvitedRow> {
        &mut self.invited
    }

    fn others(&self) -> usize {
        self.skipped.len()
    }
}

fn skip(out: &mut Outcome, email: &str, reason: String) {
    out.skipped.push(SkippedUser { email: email.to_owned(), reason });
}

/// Issues a new invite link to each pending user of `emails` in the caller's transaction; the
/// status is checked here, in the same transaction, so a user who registered meanwhile is skipped.
pub fn reinvite_rows(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    base_url: &str,
    emails: &[String],
    now: Timestamp,
    expires_at: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    for email in emails {
        match pending(tx, tenant, email)? {
            Ok(user) => {
                let token = issue_token(tx, tenant, user.id, InvitePurpose::Invite, now, expires_at)?;
                let locale = store::users::locale(tx, tenant, user.id)?;
                out.invited.push(InvitedRow {
                    email: user.email,
                    name: user.name,
                    invite_url: format!("{base_url}/invite/{token}"),
                    emailed: None,
                    email_error: None,
                    locale,
                });
            }
            Err(reason) => skip(out, email, reason),
        }
    }
    Ok(())
}

/// A dry run of [`reinvite_rows`]: who would get a link (with an empty URL), who would not.
pub fn preview_rows(tx: &impl Reader, tenant: TenantId, emails: &[String], out: &mut Outcome) -> Result<(), Error> {
    for email in emails {
        match pending(tx, tenant, email)? {
            Ok(user) => out.invited.push(InvitedRow {
                email: user.email,
                name: user.name,
                invite_url: String::new(),
                emailed: None,
                email_error: None,
                locale: None,
            }),
            Err(reason) => skip(out, email, reason),
        }
    }
    Ok(())
}

/// The tenant of `slug` and the addresses `req` names, in order (see [`targets`]).
pub async fn tenant_and_targets(db: &Db, slug: String, req: Reinvite) -> Result<(TenantRow, Vec<String>), Error> {
    db.read(move |tx| -> Result<_, Error> {
        let t = crate::tenants::require(tx, &slug)?;
        let targets = targets(tx, t.id, &req)?;
        Ok((t, targets))
    })
    .await
}

/// The reinvite's steps for [`super::bulk::run`]: each batch's pending users get a new link valid
/// until `expires_at`, or, with `dry_run`, are only counted.
pub fn steps(
    tenant: &TenantRow,
    now: Timestamp,
    expires_at: Timestamp,
    dry_run: bool,
) -> Steps<impl StoreStep<String, Outcome>, impl PreviewStep<String, Outcome>> {
    let preview = |tx: &ReadTx<'_>, t, emails: &[String], o: &mut Outcome| preview_rows(tx, t, emails, o);
    Steps::for_tenant(tenant, now, expires_at, dry_run, reinvite_rows, preview)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_names_users_or_asks_for_all_pending() {
        let named = Reinvite { emails: vec!["a@x.test".into()], ..Reinvite::default() };
        assert!(validate(&named).is_ok());
        assert!(validate(&Reinvite { all_pending: true, ..Reinvite::default() }).is_ok());
        assert!(validate(&Reinvite::default()).is_err());
        assert!(validate(&Reinvite { all_pending: true, ..named }).is_err());
    }
}
