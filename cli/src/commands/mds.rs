//! `latchkey mds import|status`: the FIDO metadata that verified attestation policies check.

use latchkey::admin::{ImportMds, MdsStatus};

use crate::args::MdsCmd;
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields};

fn read_text(path: &std::path::Path, what: &str) -> Result<String, CliError> {
    let bytes = std::fs::read(path).map_err(|e| CliError::File(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|_| {
        CliError::File(format!("{} is not text: a {what} is text (base64 and dots, or PEM)", path.display()))
    })
}

fn shown(s: &MdsStatus) -> Result<Output, CliError> {
    let rows = vec![
        ("serial", s.serial.to_string()),
        ("next update", s.next_update.clone()),
        ("authenticators", s.authenticators.to_string()),
        ("refused", format!("{} (revoked or compromised)", s.refused)),
        ("imported", s.imported.clone()),
        ("sha256", s.sha256.clone()),
    ];
    Ok(Output::new(s)?.table(fields(&rows)))
}

pub fn run(client: &Client, cmd: MdsCmd) -> Result<Output, CliError> {
    match cmd {
        MdsCmd::Import { file, roots, force } => {
            let blob = read_text(&file, "metadata BLOB")?;
            let roots = roots.iter().map(|r| read_text(r, "root certificate")).collect::<Result<Vec<_>, _>>()?;
            let s: MdsStatus = client.post("/mds", &ImportMds { blob, roots, force })?;
            Ok(shown(&s)?
                .text(format!(
                    "Imported FIDO metadata no. {}: {} authenticator models, next update {}.",
                    s.serial, s.authenticators, s.next_update
                ))
                .note("Tenants check it at once: latchkey tenant update SLUG --attestation-policy verified"))
        }
        MdsCmd::Status => shown(&client.get::<MdsStatus>("/mds")?),
    }
}
