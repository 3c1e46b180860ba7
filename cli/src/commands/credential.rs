use latchkey::admin::AdminCredential;

use super::seg;
use crate::args::CredentialCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

pub fn run(client: &Client, cmd: CredentialCmd) -> Result<Output, CliError> {
    match cmd {
        CredentialCmd::List { tenant, email } => {
            let list: Vec<AdminCredential> =
                client.get(&format!("/tenants/{}/users/{}/credentials", seg(&tenant.tenant)?, seg(&email)?))?;
            let mut t = table(&["ID", "TYPE", "DEVICE", "NAME", "SYNCED", "CREATED", "LAST USED"]);
            for c in &list {
                t.add_row(vec![
                    c.id.clone(),
                    c.kind.clone(),
                    c.device.clone(),
                    c.name.clone(),
                    if c.synced { "yes".into() } else { "no".into() },
                    c.created.clone(),
                    c.last_used.clone().unwrap_or_else(|| "never".into()),
                ]);
            }
            let out = Output::new(&list)?.table(t);
            Ok(if list.len() == 1 {
                out.note("Only one credential: recommend the user adds a backup security key.")
            } else {
                out
            })
        }
        CredentialCmd::Revoke { tenant, email, credential_id } => {
            let path = format!(
                "/tenants/{}/users/{}/credentials/{}",
                seg(&tenant.tenant)?,
                seg(&email)?,
                seg(&credential_id)?
            );
            client.call::<(), serde_json::Value>(hyper::Method::DELETE, &path, None)?;
            Ok(Output::new(&serde_json::json!({"revoked": credential_id}))?
                .text(format!("Revoked credential {credential_id} of {email}."))
                .note(format!("If it was their only one: latchkey user recover --tenant {} {email}", tenant.tenant)))
        }
    }
}
