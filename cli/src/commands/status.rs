use latchkey::admin::Status;

use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields};

/// "14", or "14 (database 15, which 0.2.0 and later serve)" while a newer release's migration
/// is served during a rolling upgrade.
fn schema(s: &Status) -> String {
    if s.database_schema_version == s.schema_version {
        return s.schema_version.to_string();
    }
    let serves = match s.database_serves_from.as_str() {
        "" => String::new(),
        from => format!(", which {from} and later serve"),
    };
    format!("{} (database {}{serves})", s.schema_version, s.database_schema_version)
}

pub fn run(client: &Client) -> Result<Output, CliError> {
    let s: Status = client.get("/status")?;
    let table = fields(&[
        ("status", "running".into()),
        ("version", format!("{} (commit {})", s.version, s.commit)),
        ("schema version", schema(&s)),
        ("uptime", format!("{}s", s.uptime_seconds)),
        ("listen", s.listen.clone()),
        ("public url", s.public_url.clone()),
        ("database", s.database.clone()),
        ("admin socket", s.admin_socket.clone()),
        ("tenants", s.tenants.to_string()),
        ("rsa engine", s.rsa_engine.clone()),
    ]);
    let uptime = format!("{}s", s.uptime_seconds);
    Ok(Output::new(&s)?
        .with_field("status", |_| "running".into())
        .with_field("uptime", |_| uptime.clone().into())
        .table(table))
}
