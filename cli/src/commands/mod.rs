//! One module per noun. Each command makes its admin calls and returns an [`Output`].

pub mod app;
pub mod key;
pub mod status;
pub mod tenant;

use crate::error::CliError;

/// Destructive commands need `--yes`; without it nothing is sent.
pub fn require_yes(yes: bool, what: &str) -> Result<(), CliError> {
    if yes {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "refusing to delete {what} without --yes; this cannot be undone"
        )))
    }
}

/// A path segment from user input: only characters that need no escaping are let through, so a
/// `/` or `?` in an argument cannot reach another admin call.
pub fn seg(value: &str) -> Result<&str, CliError> {
    if !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | '+'))
    {
        Ok(value)
    } else {
        Err(CliError::Usage(format!("{value:?} is not a valid identifier")))
    }
}
