use latchkey::admin::{Confirm, Key, KeyState, RotateKey};

use super::{require_yes, seg};
use crate::args::KeyCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, table};

fn key_table(keys: &[Key]) -> comfy_table::Table {
    let mut t = table(&["KID", "STATE", "ALGORITHM", "BITS", "CREATED"]);
    for k in keys {
        t.add_row(vec![
            k.kid.clone(),
            k.state.as_str().into(),
            k.algorithm.clone(),
            k.bits.to_string(),
            k.created.clone(),
        ]);
    }
    t
}

pub fn run(client: &Client, cmd: KeyCmd) -> Result<Output, CliError> {
    match cmd {
        KeyCmd::List { tenant } => {
            let keys: Vec<Key> = client.get(&format!("/tenants/{}/keys", seg(&tenant.tenant)?))?;
            Ok(Output::new(&keys)?.table(key_table(&keys)))
        }
        KeyCmd::Rotate { tenant, alg } => {
            let slug = seg(&tenant.tenant)?;
            let body = RotateKey { alg: alg.clone() };
            let key: Key = client.post(&format!("/tenants/{slug}/keys/rotate"), &body)?;
            if let Some(asked) = &alg
                && key.algorithm != *asked
            {
                return Err(CliError::Protocol(format!(
                    "the daemon made an {} key, not {asked}: it predates --alg; upgrade it",
                    key.algorithm
                )));
            }
            // Every key, so that the one to retire later is in front of the operator, by its kid.
            let keys: Vec<Key> = client.get(&format!("/tenants/{slug}/keys"))?;
            let previous: Vec<&str> = keys
                .iter()
                .filter(|k| k.state == KeyState::Previous && k.algorithm == key.algorithm)
                .map(|k| k.kid.as_str())
                .collect();
            let out = Output::new(&key)?
                .text(format!("Key {} now signs new {} tokens for {slug}.", key.kid, key.algorithm))
                .table(key_table(&keys));
            Ok(match previous.as_slice() {
                [] => out,
                kids => out.note(format!(
                    "The previous key stays in the JWKS. Once tokens it signed have expired (tokens.access_token_ttl \
                     and id_token_ttl after now): {}",
                    kids.iter()
                        .map(|kid| format!("latchkey key retire --tenant {} {kid} --yes", tenant.tenant))
                        .collect::<Vec<_>>()
                        .join("; ")
                )),
            })
        }
        KeyCmd::Retire { tenant, kid, yes } => {
            require_yes(yes, &format!("signing key {kid:?} (tokens it signed stop verifying)"))?;
            let slug = seg(&tenant.tenant)?;
            let left: Vec<Key> =
                client.post(&format!("/tenants/{slug}/keys/{}/retire", seg(&kid)?), &Confirm { confirm: true })?;
            Ok(Output::new(&left)?
                .text(format!("Retired key {kid}; it is no longer published. Keys left:"))
                .table(key_table(&left)))
        }
    }
}
