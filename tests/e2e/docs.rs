//! Documentation stays in step with the code and stands on its own:
//!
//! - man pages (one per command and nested subcommand) and shell completions are rendered from
//!   the clap definitions and committed; a test fails when they are stale, when a page names
//!   another page that does not exist, or when an option has no help text;
//! - `latchkeyd(8)` carries the sections an operator looks for (FILES, ENVIRONMENT, SIGNALS,
//!   EXIT STATUS), written here in roff next to what clap renders;
//! - README.md, bench/README.md and docs/*.md link only to files of this repository.
//!
//! Regenerate with `LATCHKEY_UPDATE_DOCS=1 cargo test -p latchkey-tests --test e2e docs`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Command;
use roff::{Inline, Roff, bold, italic, roman};

use crate::support::repo_root;

/// A section written by hand: a heading, an optional paragraph, then tagged items.
struct Section {
    title: &'static str,
    intro: &'static str,
    items: &'static [(&'static str, &'static str)],
}

/// A section written by hand, as roff (the `roff` crate escapes the text: backslashes, hyphens,
/// apostrophes, a line that would start a request).
fn render_section(s: &Section) -> String {
    let mut r = Roff::new();
    r.control("SH", [s.title]);
    if !s.intro.is_empty() {
        r.text([roman(s.intro)]);
    }
    for (tag, text) in s.items {
        r.control("TP", []).text([bold(*tag)]).text([roman(*text)]);
    }
    r.to_roff()
}

/// A section of lines kept as they are (`.nf` … `.fi`): examples, file formats, SEE ALSO.
fn verbatim_section(title: &str, body: &str, keep_lines: bool) -> String {
    let mut r = Roff::new();
    r.control("SH", [title]);
    if keep_lines {
        r.control("nf", []).text([roman(body)]).control("fi", []);
    } else {
        r.text([roman(body)]);
    }
    r.to_roff()
}

const DAEMON_SECTIONS: &[Section] = &[
    Section {
        title: "EXIT STATUS",
        intro: "",
        items: &[
            (
                "0",
                "Stopped cleanly after SIGTERM or SIGINT; check-config: the configuration is valid; \
                 migrate-store: the copy is committed and every table's row count matches.",
            ),
            (
                "1",
                "The configuration is invalid, a file it names cannot be used, another latchkeyd holds the \
                 database (its PID is named), the database belongs to a newer release or lacks its \
                 key-encryption key, or the listener or admin socket cannot be bound; migrate-store refused or \
                 failed, and committed nothing. The reason is on standard error.",
            ),
            ("2", "Usage error: an unknown option or a missing value."),
        ],
    },
    Section {
        title: "ENVIRONMENT",
        intro: "",
        items: &[
            ("LATCHKEY_CONFIG", "The configuration file, as --config (default /etc/latchkey/config.toml)."),
            (
                "LATCHKEY_<SECTION>_<KEY>",
                "Overrides one key of the file, e.g. LATCHKEY_SERVER_PUBLIC_URL=https://id.example.com or \
                 LATCHKEY_LIMITS_TOKEN_RATE_PER_MINUTE=300. Values are read as TOML values when they parse as \
                 one, else as strings. Precedence: defaults < file < environment < flags. A variable that names \
                 no known key is ignored with a warning; a bad value for a known key is an error.",
            ),
            ("RUST_LOG", "The log filter; when set it takes precedence over server.log_level."),
            (
                "NOTIFY_SOCKET",
                "Set by systemd (Type=notify): READY=1 is sent once the daemon serves, STOPPING=1 when it stops.",
            ),
        ],
    },
    Section {
        title: "FILES",
        intro: "",
        items: &[
            ("/etc/latchkey/config.toml", "The configuration file (see config.example.toml in the sources)."),
            ("/var/lib/latchkey/latchkey.db", "The SQLite database (storage.path), with its -wal and -shm files."),
            (
                "/var/lib/latchkey/latchkey.db.lock",
                "Held with an exclusive lock while a daemon uses the database; holds that daemon's PID.",
            ),
            (
                "/var/lib/latchkey/key-encryption.key",
                "The key-encryption key (keys.encryption_key_file), mode 0600, created on first start. Back it \
                 up with the database: without it the signing keys and social client secrets cannot be opened.",
            ),
            ("/run/latchkey/admin.sock", "The admin socket (admin.socket) the latchkey CLI talks to."),
            ("./latchkey-data/", "With --dev: database, key-encryption key and admin.sock."),
        ],
    },
    Section {
        title: "SIGNALS",
        intro: "",
        items: &[
            (
                "SIGTERM, SIGINT",
                "Drain for server.drain (5 s on PostgreSQL, none on SQLite: /readyz answers 503 while \
                 everything else is still served), then stop accepting connections, finish in-flight requests \
                 (bounded grace period), close the database, remove the admin socket and exit 0. A second \
                 signal ends the drain at once.",
            ),
            (
                "SIGHUP",
                "Read the configuration again (same flags and environment as at start) and apply what can \
                 change without a restart: server.log_level (or RUST_LOG), the rate limits of [limits], [smtp] \
                 (its password file read again) and the TLS certificate and key files. Everything is prepared \
                 first: on any error the old settings stay. The log names what was reloaded and which changed \
                 settings need a restart. systemctl reload latchkeyd sends it.",
            ),
        ],
    },
];

const CLI_SECTIONS: &[Section] = &[
    Section {
        title: "EXIT STATUS",
        intro: "",
        items: &[
            ("0", "Done."),
            (
                "1",
                "The daemon refused (not found, conflict, invalid input); its code and message are on standard error.",
            ),
            ("2", "Usage error; nothing was sent."),
            (
                "3",
                "The daemon cannot be reached (socket missing, permission denied); the message names the socket tried.",
            ),
            ("4", "A local file could not be read or written (an input file, --links-out, a backup file)."),
        ],
    },
    Section {
        title: "ENVIRONMENT",
        intro: "",
        items: &[
            ("LATCHKEY_ADMIN_SOCKET", "The admin socket, as --socket."),
            ("LATCHKEY_CONFIG", "The daemon's configuration file, read for admin.socket when no socket is given."),
        ],
    },
    Section {
        title: "FILES",
        intro: "Without --socket or LATCHKEY_ADMIN_SOCKET the socket is looked for in this order:",
        items: &[
            (
                "./latchkey-data/admin.sock",
                "The socket of latchkeyd --dev started in the current directory, if it exists.",
            ),
            ("/etc/latchkey/config.toml", "admin.socket of the daemon's configuration file ($LATCHKEY_CONFIG if set)."),
            ("/run/latchkey/admin.sock", "The default socket of a production daemon."),
        ],
    },
];

/// Disables clap's `help` subcommand everywhere: it is not a page of its own.
fn without_help_subcommand(cmd: Command) -> Command {
    cmd.disable_help_subcommand(true).mut_subcommands(without_help_subcommand)
}

/// NAME: the page's name and the first sentence of what the command does (clap_mangen's takes
/// the whole first paragraph, which `apropos` then shows as one long line).
fn name_section(cmd: &Command) -> String {
    let name = cmd.get_display_name().unwrap_or_else(|| cmd.get_name()).to_owned();
    let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
    let first = about.split(". ").next().unwrap_or_default().trim_end_matches('.').to_owned();
    let mut r = Roff::new();
    r.control("SH", ["NAME"]).text([roman(format!("{name} - {first}"))]);
    r.to_roff()
}

/// SYNOPSIS with each option's value (`[--socket PATH]`): clap_mangen's shows `[--socket]` alone.
fn synopsis_section(cmd: &Command) -> String {
    let bin = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name()).to_owned();
    let mut parts: Vec<Inline> = vec![bold(bin)];
    let value_of = |a: &clap::Arg| {
        a.get_value_names()
            .and_then(|v| v.first().map(|s| s.to_string()))
            .unwrap_or_else(|| a.get_id().as_str().to_uppercase())
    };
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set() && !a.is_positional()) {
        let flag = match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => format!("-{s}|--{l}"),
            (None, Some(l)) => format!("--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, None) => continue,
        };
        let (open, close) = if a.is_required_set() { ("<", ">") } else { ("[", "]") };
        parts.push(roman(format!(" {open}")));
        parts.push(bold(flag));
        if a.get_action().takes_values() {
            parts.push(roman(" "));
            parts.push(italic(value_of(a)));
        }
        parts.push(roman(close));
    }
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set() && a.is_positional()) {
        let (open, close) = if a.is_required_set() { ("<", ">") } else { ("[", "]") };
        parts.push(roman(format!(" {open}")));
        parts.push(italic(value_of(a)));
        parts.push(roman(close));
    }
    if cmd.has_subcommands() {
        parts.push(roman(" <"));
        parts.push(italic("COMMAND"));
        parts.push(roman(">"));
    }
    let mut r = Roff::new();
    r.control("SH", ["SYNOPSIS"]).text(parts);
    r.to_roff()
}

/// One page: clap's sections, then the hand-written ones, then SEE ALSO.
fn page(cmd: Command, section: &str, custom: &[Section], see_also: &[String]) -> String {
    // VERSION shows the release alone: `--version` adds the commit, which would make every
    // commit's pages stale.
    let cmd = cmd.long_version(None::<&'static str>);
    let man = clap_mangen::Man::new(cmd.clone()).section(section);
    let mut buf: Vec<u8> = Vec::new();
    man.render_title(&mut buf).unwrap();
    buf.extend_from_slice(name_section(&cmd).as_bytes());
    buf.extend_from_slice(synopsis_section(&cmd).as_bytes());
    man.render_description_section(&mut buf).unwrap();
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut buf).unwrap();
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut buf).unwrap();
    }
    let mut text = String::from_utf8(buf).unwrap();
    for s in custom {
        text.push_str(&render_section(s));
    }
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        // clap_mangen calls this section EXTRA and fills its lines into one paragraph; examples
        // and file formats keep their lines.
        let after = after.to_string();
        let (title, body) = match after.strip_prefix("Examples:\n") {
            Some(examples) => ("EXAMPLES", examples.to_owned()),
            None => ("NOTES", after.clone()),
        };
        text.push_str(&verbatim_section(title, body.trim_end(), true));
    }
    if cmd.get_version().is_some() {
        let mut buf = Vec::new();
        man.render_version_section(&mut buf).unwrap();
        text.push_str(&String::from_utf8(buf).unwrap());
    }
    if !see_also.is_empty() {
        text.push_str(&verbatim_section("SEE ALSO", &see_also.join(", "), false));
    }
    // Each of clap_mangen's section renderers repeats the page's two-line preamble; keep the first.
    let mut lines: Vec<&str> = text.lines().collect();
    if let [first, second, rest @ ..] = lines.as_slice() {
        let preamble = [*first, *second];
        let mut kept = preamble.to_vec();
        let mut i = 0;
        while i < rest.len() {
            if rest[i..].starts_with(&preamble) {
                i += 2;
            } else {
                kept.push(rest[i]);
                i += 1;
            }
        }
        lines = kept;
    }
    lines.join("\n") + "\n"
}

/// Where a page sits in its tree, for SEE ALSO.
struct Place<'a> {
    page: &'a str,
    section: &'a str,
    /// `latchkey(1)` or `latchkeyd(8)`: named by every page below it.
    root: &'a str,
}

/// Pages for `cmd` and, recursively, each of its subcommands (`latchkey-user-import.1`). A
/// subcommand's page names the root page and its parent page in SEE ALSO.
fn pages_of(cmd: &Command, at: &Place<'_>, custom: &[Section], see_also: &[String], out: &mut Vec<(String, String)>) {
    // clap wants 'static names without its `string` feature; a test may leak a few bytes.
    let name: &'static str = Box::leak(at.page.to_owned().into_boxed_str());
    let named = cmd.clone().name(name).display_name(name);
    out.push((format!("man/{}.{}", at.page, at.section), page(named, at.section, custom, see_also)));
    let this = format!("{}({})", at.page, at.section);
    for sub in cmd.get_subcommands() {
        let mut refs = vec![at.root.to_owned()];
        if this != at.root {
            refs.push(this.clone());
        }
        let sub_page = format!("{}-{}", at.page, sub.get_name());
        pages_of(sub, &Place { page: &sub_page, ..*at }, &[], &refs, out);
    }
}

/// Every generated file: man pages, then completions.
fn expected() -> Vec<(String, String)> {
    let mut files = vec![];
    let mut daemon = without_help_subcommand(latchkeyd::args::command());
    daemon.build();
    let at = Place { page: "latchkeyd", section: "8", root: "latchkeyd(8)" };
    pages_of(&daemon, &at, DAEMON_SECTIONS, &["latchkey(1)".to_owned()], &mut files);
    let mut cli = without_help_subcommand(latchkey_cli::args::command());
    cli.build();
    let at = Place { page: "latchkey", section: "1", root: "latchkey(1)" };
    pages_of(&cli, &at, CLI_SECTIONS, &["latchkeyd(8)".to_owned()], &mut files);
    for (shell, file) in [
        (clap_complete::Shell::Bash, "latchkey.bash"),
        (clap_complete::Shell::Zsh, "_latchkey"),
        (clap_complete::Shell::Fish, "latchkey.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut latchkey_cli::args::command(), "latchkey", &mut buf);
        files.push((format!("contrib/completions/{file}"), String::from_utf8(buf).unwrap()));
    }
    files
}

#[test]
fn man_pages_and_completions_are_current() {
    let root = repo_root();
    let update = std::env::var_os("LATCHKEY_UPDATE_DOCS").is_some();
    let files = expected();
    let wanted: BTreeSet<String> = files.iter().map(|(rel, _)| rel.clone()).collect();
    let mut stale = vec![];
    for (rel, content) in &files {
        let path = root.join(rel);
        if update {
            std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).unwrap();
            std::fs::write(&path, content).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(content.as_str()) {
            stale.push(rel.clone());
        }
    }
    // A page for a command that no longer exists is stale too.
    for entry in std::fs::read_dir(root.join("man")).unwrap() {
        let rel = format!("man/{}", entry.unwrap().file_name().to_string_lossy());
        if !wanted.contains(&rel) {
            if update {
                std::fs::remove_file(root.join(&rel)).unwrap();
            } else {
                stale.push(rel);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated docs: {stale:?}; run LATCHKEY_UPDATE_DOCS=1 cargo test -p latchkey-tests --test e2e docs"
    );
}

/// The `latchkey…(N)` pages a roff text names (in SUBCOMMANDS and SEE ALSO), as file names.
fn referenced_pages(roff: &str) -> BTreeSet<String> {
    let text = roff.replace("\\-", "-");
    let mut found = BTreeSet::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("latchkey") {
        let tail = &rest[at..];
        let name_len = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(tail.len());
        let (name, after) = tail.split_at(name_len);
        let mut chars = after.chars();
        if let (Some('('), Some(d), Some(')')) = (chars.next(), chars.next(), chars.next())
            && d.is_ascii_digit()
        {
            found.insert(format!("{name}.{d}"));
        }
        rest = &tail[name_len.max(1)..];
    }
    found
}

#[test]
fn every_referenced_man_page_exists() {
    let files = expected();
    let pages: BTreeSet<String> =
        files.iter().filter_map(|(rel, _)| rel.strip_prefix("man/")).map(str::to_owned).collect();
    assert!(pages.contains("latchkey-user-import.1"), "nested subcommands get pages: {pages:?}");
    assert!(pages.contains("latchkey-app-create.1"));
    assert!(pages.contains("latchkeyd-check-config.8"));
    let mut missing = vec![];
    for (rel, text) in files.iter().filter(|(rel, _)| rel.starts_with("man/")) {
        for name in referenced_pages(text) {
            if !pages.contains(&name) {
                missing.push(format!("{rel} names {name}"));
            }
        }
        assert!(text.contains(".SH \"SEE ALSO\""), "{rel} has no SEE ALSO");
    }
    assert!(missing.is_empty(), "pages named but not generated: {missing:?}");
    assert!(!pages.iter().any(|p| p.contains("-help.")), "clap's help subcommand is no page: {pages:?}");
}

#[test]
fn daemon_page_has_operator_sections() {
    let files = expected();
    let (_, daemon) = files.iter().find(|(rel, _)| rel == "man/latchkeyd.8").unwrap();
    for heading in [".SH FILES", ".SH ENVIRONMENT", ".SH SIGNALS", ".SH \"EXIT STATUS\"", ".SH \"SEE ALSO\""] {
        assert!(daemon.contains(heading), "latchkeyd.8 lacks {heading}");
    }
    for needle in ["SIGHUP", "LATCHKEY_CONFIG", "RUST_LOG", "key\\-encryption.key", "latchkey(1)"] {
        assert!(daemon.contains(needle), "latchkeyd.8 does not mention {needle}");
    }
    let (_, cli) = files.iter().find(|(rel, _)| rel == "man/latchkey.1").unwrap();
    for needle in [".SH \"EXIT STATUS\"", "LATCHKEY_ADMIN_SOCKET", "latchkeyd(8)"] {
        assert!(cli.contains(needle), "latchkey.1 does not mention {needle}");
    }
}

/// Every argument of `cmd` and its subcommands, with the command path, that has no help text.
fn undocumented(cmd: &Command, path: &str, out: &mut Vec<String>) {
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        if arg.get_help().is_none() && arg.get_long_help().is_none() {
            out.push(format!("{path} {}", arg.get_id()));
        }
    }
    for sub in cmd.get_subcommands() {
        if sub.get_about().is_none() && sub.get_long_about().is_none() {
            out.push(format!("{path} {} (the command itself)", sub.get_name()));
        }
        undocumented(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn every_option_and_argument_has_help() {
    let mut missing = vec![];
    let mut cli = latchkey_cli::args::command();
    cli.build();
    undocumented(&cli, "latchkey", &mut missing);
    let mut daemon = latchkeyd::args::command();
    daemon.build();
    undocumented(&daemon, "latchkeyd", &mut missing);
    assert!(missing.is_empty(), "arguments without help text (add a /// doc comment): {missing:?}");
}

/// README.md, bench/README.md (the benchmark results) and every Markdown file under docs/.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("bench/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The targets of `[text](target)` links in Markdown, code spans and blocks left out.
fn link_targets(markdown: &str) -> Vec<String> {
    let mut targets = vec![];
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        // Drop inline code spans: `a](b)` inside backticks is not a link.
        let mut plain = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let Some(end) = tail.find(')') else { break };
            targets.push(tail[..end].trim().to_owned());
            rest = &tail[end..];
        }
    }
    targets
}

#[test]
fn docs_stand_alone_and_their_links_resolve() {
    let root = repo_root();
    let files = markdown_files(&root);
    assert!(files.len() >= 6, "README.md and the guides under docs/: {files:?}");
    let mut problems = vec![];
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let rel = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        for outside in ["../shared", "SPEC.md", "SPEC §"] {
            if text.contains(outside) {
                problems.push(format!("{rel} mentions {outside:?}: the repository documents itself"));
            }
        }
        for target in link_targets(&text) {
            let target = target.split_whitespace().next().unwrap_or_default();
            if target.is_empty()
                || target.starts_with('#')
                || target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let path = target.split('#').next().unwrap_or_default();
            let resolved = file.parent().unwrap_or(&root).join(path);
            if !resolved.exists() {
                problems.push(format!("{rel} links to {target}, which does not exist"));
            } else if !resolved.canonicalize().unwrap().starts_with(root.canonicalize().unwrap()) {
                problems.push(format!("{rel} links to {target}, outside the repository"));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn link_targets_skip_code() {
    let md = "See [ops](docs/operations.md) and `[x](nope.md)`.\n```\n[y](nope2.md)\n```\n[a](b.md#c) [w](https://x)";
    assert_eq!(link_targets(md), vec!["docs/operations.md", "b.md#c", "https://x"]);
    assert_eq!(
        referenced_pages("latchkey\\-user\\-import(1)\nlatchkey(1), latchkeyd(8) latchkeyd.8"),
        ["latchkey-user-import.1", "latchkey.1", "latchkeyd.8"].iter().map(|s| s.to_string()).collect()
    );
}
