//! `latchkey`: the command-line client of latchkeyd. A thin client: every operation is one or
//! more admin-socket calls; nothing here touches the database.

pub mod args;
pub mod client;
pub mod commands;
pub mod error;
pub mod output;

use std::process::ExitCode;

use clap::FromArgMatches;
use clap::parser::ValueSource;

use crate::args::{Cli, Command, Shell};
use crate::client::{Client, Socket, default_socket};
use crate::error::CliError;

/// Parses `std::env::args`, runs the command, prints, and returns the exit code of SPEC §1.3.
pub fn main() -> ExitCode {
    let matches = args::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let socket = match (&cli.socket, matches.value_source("socket")) {
        (Some(path), Some(ValueSource::EnvVariable)) => {
            Socket { path: path.clone(), chosen: "from LATCHKEY_ADMIN_SOCKET".into() }
        }
        (Some(path), _) => Socket { path: path.clone(), chosen: "from --socket".into() },
        (None, _) => default_socket(),
    };
    let json = matches!(cli.output, args::Format::Json);
    match run(cli, socket) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(code) => ExitCode::from(code),
        // The reader of our output went away (`| head -1`): nothing to say, and no one to say it to.
        Err(CliError::ClosedPipe) => ExitCode::SUCCESS,
        // With `-o json` the error is JSON too, on standard error: what a script reads.
        Err(e) if json => {
            let body = serde_json::json!({"error": e.code(), "error_description": e.description(), "exit_code": e.exit_code()});
            eprintln!("{body}");
            ExitCode::from(e.exit_code())
        }
        Err(e) => {
            eprintln!("latchkey: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli, socket: Socket) -> Result<u8, CliError> {
    if let Command::Completions { shell } = cli.command {
        let mut cmd = args::command();
        let shell = match shell {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
        };
        let mut script = vec![];
        clap_complete::generate(shell, &mut cmd, "latchkey", &mut script);
        output::print_out(String::from_utf8_lossy(&script).trim_end())?;
        return Ok(0);
    }
    let client = Client::new(socket)?;
    let output = match cli.command {
        Command::Status => commands::status::run(&client)?,
        Command::Tenant(c) => commands::tenant::run(&client, c)?,
        Command::App(c) => commands::app::run(&client, c)?,
        Command::Key(c) => commands::key::run(&client, c)?,
        Command::User(c) => commands::user::run(&client, c, cli.output, cli.quiet)?,
        Command::Credential(c) => commands::credential::run(&client, c)?,
        Command::Role(c) => commands::role::run(&client, c)?,
        Command::Social(c) => commands::social::run(&client, c)?,
        Command::Mds(c) => commands::mds::run(&client, c)?,
        Command::Scim(c) => commands::scim::run(&client, c)?,
        Command::Webhook(c) => commands::webhook::run(&client, c)?,
        Command::Backup { file } => {
            let bytes = client.download("/backup", &file)?;
            output::Output::new(&serde_json::json!({"file": file.display().to_string(), "bytes": bytes}))?
                .text(format!("Wrote a consistent copy of the database to {} ({bytes} bytes).", file.display()))
                .note("Keep the key-encryption key file (keys.encryption_key_file) with it: without it the signing keys cannot be opened.")
        }
        Command::Apply { file, dry_run } => commands::apply::apply(&client, &file, dry_run)?,
        Command::Export { tenant } => commands::apply::export(&client, &tenant.tenant)?,
        Command::Audit(args) => commands::audit::run(&client, args, cli.output)?,
        Command::Completions { .. } => return Ok(0),
    };
    output.print(cli.output, cli.quiet)?;
    Ok(output.exit_code)
}
