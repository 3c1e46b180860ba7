use latchkey::admin::{Invitation, InviteUser, Recovery};

use super::seg;
use crate::args::UserCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields};

pub fn run(client: &Client, cmd: UserCmd) -> Result<Output, CliError> {
    match cmd {
        UserCmd::Invite { tenant, email, name, roles } => {
            let inv: Invitation = client
                .post(&format!("/tenants/{}/users/invite", seg(&tenant.tenant)?), &InviteUser { email, name, roles })?;
            Ok(Output::new(&inv)?
                .table(fields(&[
                    ("email", inv.email.clone()),
                    ("name", inv.name.clone()),
                    ("invite url", inv.invite_url.clone()),
                    ("expires", inv.expires_at.clone()),
                ]))
                .note("Send the link to the user: it works once, and they register their passkey with it."))
        }
        UserCmd::Recover { tenant, email } => {
            let slug = seg(&tenant.tenant)?;
            let rec: Recovery =
                client.post(&format!("/tenants/{slug}/users/{}/recover", seg(&email)?), &serde_json::json!({}))?;
            Ok(Output::new(&rec)?
                .table(fields(&[
                    ("email", rec.email.clone()),
                    ("recovery url", rec.recovery_url.clone()),
                    ("expires", rec.expires_at.clone()),
                ]))
                .note("The link works once. When it is used, the user's other sessions end."))
        }
    }
}
