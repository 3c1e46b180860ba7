//! One module per noun. Each command makes its admin calls and returns an `Output`.

pub mod app;
pub mod apply;
pub mod audit;
pub mod bulk;
pub mod credential;
pub mod import;
pub mod key;
pub mod mds;
pub mod reinvite;
pub mod role;
pub mod scim;
pub mod social;
pub mod status;
pub mod tenant;
pub mod user;
pub mod webhook;

use crate::error::CliError;

/// A secret (`what`) from a file, or from standard input for `-`; one trailing newline dropped.
/// Secrets never go on a command line, where `ps` and the shell's history would show them.
pub fn read_secret(path: &std::path::Path, what: &str) -> Result<String, CliError> {
    use std::io::Read;
    let mut text = String::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::File(format!("reading the {what} from standard input: {e}")))?;
    } else {
        text = std::fs::read_to_string(path)
            .map_err(|e| CliError::File(format!("reading the {what} from {}: {e}", path.display())))?;
    }
    Ok(text.trim_end_matches(['\r', '\n']).to_owned())
}

/// Destructive commands need `--yes`; without it nothing is sent.
pub fn require_yes(yes: bool, what: &str) -> Result<(), CliError> {
    if yes {
        Ok(())
    } else {
        Err(CliError::Usage(format!("refusing to delete {what} without --yes; this cannot be undone")))
    }
}

/// A path segment from user input, percent-encoded so that a `/` or `?` in an argument cannot
/// reach another admin call.
pub fn seg(value: &str) -> Result<String, CliError> {
    if value.is_empty() {
        return Err(CliError::Usage("an empty name is not valid here".into()));
    }
    // Unreserved characters, `@` and `+` (e-mail addresses) stay as they are.
    const ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b'@')
        .remove(b'+');
    Ok(percent_encoding::utf8_percent_encode(value, ESCAPED).to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn segments_are_encoded() {
        assert_eq!(super::seg("ada+x@acme.com").unwrap(), "ada+x@acme.com");
        assert_eq!(super::seg("a/b?c").unwrap(), "a%2Fb%3Fc");
        assert!(super::seg("").is_err());
    }
}
