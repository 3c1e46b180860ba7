use latchkey::admin::Status;

use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields};

pub fn run(client: &Client) -> Result<Output, CliError> {
    let s: Status = client.get("/status")?;
    let table = fields(&[
        ("status", "running".into()),
        ("version", s.version.clone()),
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
