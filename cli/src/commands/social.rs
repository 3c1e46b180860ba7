use latchkey::admin::{Confirm, EnableSocial, SocialProvider};
use latchkey::codes;

use super::{read_secret, seg};
use crate::args::SocialCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

pub fn run(client: &Client, cmd: SocialCmd) -> Result<Output, CliError> {
    match cmd {
        SocialCmd::Enable {
            tenant,
            kind,
            client_id,
            client_secret_file,
            name,
            issuer,
            github_url,
            github_api_url,
            allowed_domains,
            allowed_orgs,
            create_users,
            no_verify,
        } => {
            if kind == "facebook" || kind == "twitter" {
                return Err(CliError::Refused {
                    code: codes::PROVIDER_NOT_AVAILABLE.into(),
                    message: format!("{kind} login is coming soon and not available; use google, github or oidc"),
                });
            }
            let client_id = client_id.ok_or_else(|| CliError::Usage("--client-id is required".into()))?;
            let path = client_secret_file.ok_or_else(|| {
                CliError::Usage("--client-secret-file FILE (or - for standard input) is required".into())
            })?;
            let req = EnableSocial {
                kind,
                client_id,
                client_secret: read_secret(&path, "client secret")?,
                name,
                issuer,
                github_url,
                github_api_url,
                allowed_domains,
                allowed_orgs,
                create_users,
                no_verify,
            };
            let p: SocialProvider = client.post(&format!("/tenants/{}/social", seg(&tenant.tenant)?), &req)?;
            let mut out = Output::new(&p)?
                .text(format!("Enabled {} sign-in (/login/{}).", p.label, p.provider))
                .note(format!("register this redirect URI at the provider: {}", p.callback_url));
            if p.links_removed > 0 {
                out = out.note(format!(
                    "the provider's issuer or API URL changed: {} link(s) made at the old one were removed; \
                     users link again by verified e-mail at their next sign-in with it",
                    p.links_removed
                ));
            }
            Ok(out)
        }
        SocialCmd::List { tenant } => {
            let list: Vec<SocialProvider> = client.get(&format!("/tenants/{}/social", seg(&tenant.tenant)?))?;
            let mut t = table(&["PROVIDER", "KIND", "LABEL", "CLIENT ID", "RESTRICTED TO", "CALLBACK URL"]);
            for p in &list {
                let limits = [p.allowed_domains.clone(), p.allowed_orgs.clone()].concat().join(", ");
                t.add_row(vec![
                    p.provider.clone(),
                    p.kind.clone(),
                    p.label.clone(),
                    p.client_id.clone(),
                    limits,
                    p.callback_url.clone(),
                ]);
            }
            // The table's RESTRICTED TO column, in the JSON too (CALLBACK URL is `callback_url`:
            // the redirect URI to register at the provider, once, under one name).
            let restricted = |p: &serde_json::Value| {
                let all = ["allowed_domains", "allowed_orgs"]
                    .iter()
                    .flat_map(|k| p[k].as_array().cloned().unwrap_or_default());
                serde_json::Value::Array(all.collect())
            };
            Ok(Output::new(&list)?.with_field("restricted_to", restricted).table(t))
        }
        // No --yes (SPEC's `social disable --tenant T PROVIDER`): users' links stay, and the
        // operator holds the secret file that `social enable` takes again.
        SocialCmd::Disable { tenant, provider, yes: _ } => {
            client.delete(
                &format!("/tenants/{}/social/{}", seg(&tenant.tenant)?, seg(&provider)?),
                &Confirm { confirm: true },
            )?;
            Ok(Output::new(&serde_json::json!({"disabled": provider}))?
                .text(format!("Disabled {provider} sign-in; users' links are kept.")))
        }
    }
}
