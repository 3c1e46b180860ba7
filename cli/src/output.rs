//! Rendering: comfy-table for people, one JSON document for scripts.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use serde::Serialize;

use crate::args::Format;
use crate::error::CliError;

/// What a command produced: JSON for scripts, and the same data as a table (or lines) for people.
pub struct Output {
    pub json: serde_json::Value,
    pub table: Option<Table>,
    /// Lines printed after the table for people (never in JSON mode, never with -q).
    pub notes: Vec<String>,
    /// Text printed instead of a table.
    pub text: Option<String>,
    /// Tables printed after the first, on stdout as it is (what `apply` created, after its plan).
    pub more_tables: Vec<Table>,
    /// What is shown this once and lost otherwise (a client secret, an invite link): with `-q`
    /// these lines are all that is printed, one value (or tab-separated record) per line.
    pub secrets: Vec<String>,
    /// Problems printed on stderr for people even with `-q` (rejected rows, skipped users): a
    /// table whose cells are escaped when printed, like every table's.
    pub problems: Vec<Table>,
    /// Exit code after printing (1 when a command partly failed, e.g. rejected import rows).
    pub exit_code: u8,
}

impl Output {
    pub fn new<T: Serialize>(value: &T) -> Result<Output, CliError> {
        let json = serde_json::to_value(value).map_err(|e| CliError::Internal(e.to_string()))?;
        Ok(Output {
            json,
            table: None,
            notes: vec![],
            text: None,
            more_tables: vec![],
            secrets: vec![],
            problems: vec![],
            exit_code: 0,
        })
    }

    /// Adds a field to the JSON object (or to each object of a JSON array, from `value_of`):
    /// a column the table shows that the daemon's answer does not carry, so that the JSON has
    /// every column of the table (SPEC: its field names are the table's columns, in snake_case).
    pub fn with_field(mut self, key: &str, value_of: impl Fn(&serde_json::Value) -> serde_json::Value) -> Output {
        let set = |o: &mut serde_json::Value| {
            let v = value_of(o);
            if let Some(map) = o.as_object_mut() {
                map.insert(key.to_owned(), v);
            }
        };
        match &mut self.json {
            serde_json::Value::Array(items) => items.iter_mut().for_each(set),
            one => set(one),
        }
        self
    }

    pub fn table(mut self, table: Table) -> Output {
        self.table = Some(table);
        self
    }

    pub fn text(mut self, text: impl Into<String>) -> Output {
        self.text = Some(text.into());
        self
    }

    /// Another table, printed on stdout after the first.
    pub fn more_table(mut self, t: Table) -> Output {
        self.more_tables.push(t);
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Output {
        self.notes.push(note.into());
        self
    }

    pub fn secret(mut self, line: impl Into<String>) -> Output {
        self.secrets.push(line.into());
        self
    }

    pub fn problem(mut self, problem: Table) -> Output {
        self.problems.push(problem);
        self
    }

    /// JSON (whatever `quiet` says); or for people the text, table and notes; or with `quiet`
    /// only the secrets. Problems go to stderr in both table modes.
    pub fn print(&self, format: Format, quiet: bool) -> Result<(), CliError> {
        match format {
            Format::Json => {
                let s = serde_json::to_string_pretty(&self.json).map_err(|e| CliError::Internal(e.to_string()))?;
                print_out(&s)?;
            }
            Format::Table if quiet => {
                // Tab-separated records of what the daemon made (secrets, links) and e-mails it
                // checked: printed as they are, for scripts.
                for s in &self.secrets {
                    print_out(s)?;
                }
                for p in &self.problems {
                    eprintln!("{}", escaped(p));
                }
            }
            Format::Table => {
                if let Some(t) = &self.text {
                    print_out(t)?;
                }
                if let Some(t) = &self.table {
                    print_out(&escaped(t).to_string())?;
                }
                for t in &self.more_tables {
                    print_out(&escaped(t).to_string())?;
                }
                for p in &self.problems {
                    eprintln!("{}", escaped(p));
                }
                for n in &self.notes {
                    eprintln!("{n}");
                }
            }
        }
        Ok(())
    }
}

/// Writes one line to standard output. A reader that went away (`| head -1`) is
/// [`CliError::ClosedPipe`], which ends the CLI quietly; Rust ignores SIGPIPE, and `println!`
/// would panic. (SIGPIPE is not restored to its default: a daemon that closes the admin socket
/// mid-request would then kill the CLI instead of giving exit 3.)
pub fn print_out(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").and_then(|()| out.flush()).map_err(|e| match e.kind() {
        std::io::ErrorKind::BrokenPipe => CliError::ClosedPipe,
        _ => CliError::LocalWrite(format!("writing to standard output: {e}")),
    })
}

/// A table with a header row.
pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    let fit = arrangement(&t);
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(fit).set_header(header);
    t
}

/// A two-column table of one object's fields.
pub fn fields(rows: &[(&str, String)]) -> Table {
    let mut t = Table::new();
    let fit = arrangement(&t);
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(fit);
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v.clone()]);
    }
    t
}

/// A list shown in one cell. Its items are separated by commas, not line breaks: a line break in
/// a cell is always escaped, so that none in the data can draw a row of its own.
pub fn lines(items: &[String]) -> String {
    if items.is_empty() { "-".to_owned() } else { items.join(", ") }
}

/// Characters a terminal would act on or hide rather than show: control characters (escape
/// sequences, line breaks, a carriage return that overwrites the line), and the invisible ones
/// that change how the text around them reads (zero-width characters, bidirectional overrides).
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{061C}')
}

/// `text` as it may be shown on a terminal: every unprintable character written as an escape
/// (`\n`, `\u{1b}`). Much of what the daemon reports was typed by someone else (a Client ID a
/// request claimed, a name, an identity provider's error), so tables and lines for people show
/// it escaped; JSON output carries it as it is, in JSON's own escapes.
pub fn escape(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(unprintable) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unprintable(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The table with every cell (and header) escaped.
fn escaped(t: &Table) -> Table {
    let cells = |row: &comfy_table::Row| -> Vec<String> {
        row.cell_iter().map(|c| escape(&c.content()).into_owned()).collect()
    };
    let mut out = Table::new();
    let fit = arrangement(&out);
    out.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(fit);
    if let Some(header) = t.header() {
        out.set_header(cells(header));
    }
    for row in t.row_iter() {
        out.add_row(cells(row));
    }
    out
}

/// Columns fitted to the terminal's width, unless it reports almost none (a terminal that says 0
/// columns, a serial console): then rows are printed whole rather than one character wide.
fn arrangement(t: &Table) -> ContentArrangement {
    match t.width() {
        Some(w) if w < 20 => ContentArrangement::Disabled,
        _ => ContentArrangement::Dynamic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped() {
        assert_eq!(escape("ada@example.com"), "ada@example.com");
        assert_eq!(escape("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(escape("\u{1b}[31mred\u{7}"), "\\u{1b}[31mred\\u{7}");
        assert_eq!(escape("x\u{202e}y\u{85}"), "x\\u{202e}y\\u{85}");
        let mut t = table(&["ACTOR", "DETAIL"]);
        t.add_row(vec!["evil\n2026-01-01 admin".to_owned(), "\u{1b}]0;title\u{7}".to_owned()]);
        let shown = escaped(&t).to_string();
        assert_eq!(shown.lines().count(), t.to_string().lines().count() - 1, "{shown}");
        assert!(!shown.contains('\u{1b}') && shown.contains("evil\\n2026"), "{shown}");
    }
}
