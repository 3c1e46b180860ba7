//! Generated documentation stays in step with the code: man pages and shell completions are
//! rendered from the clap definitions and committed; this test fails when they are stale.
//! Regenerate with `LATCHKEY_UPDATE_DOCS=1 cargo test -p latchkey-tests docs`.

use std::path::Path;

use crate::support::repo_root;

fn man(cmd: clap::Command, section: &str) -> String {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).section(section).render(&mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

fn expected() -> Vec<(String, String)> {
    let mut files = vec![];
    files.push(("man/latchkeyd.8".to_owned(), man(latchkeyd::args::command(), "8")));
    let cli = latchkey_cli::args::command();
    files.push(("man/latchkey.1".to_owned(), man(cli.clone(), "1")));
    for sub in cli.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        // clap wants 'static names without its `string` feature; a test may leak a few bytes.
        let name: &'static str = Box::leak(format!("latchkey-{}", sub.get_name()).into_boxed_str());
        let page = sub.clone().name(name).display_name(name).bin_name(format!("latchkey {}", sub.get_name()));
        files.push((format!("man/{name}.1"), man(page, "1")));
    }
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
    let mut stale = vec![];
    for (rel, content) in expected() {
        let path = root.join(&rel);
        if update {
            std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).unwrap();
            std::fs::write(&path, &content).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(content.as_str()) {
            stale.push(rel);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated docs: {stale:?}; run LATCHKEY_UPDATE_DOCS=1 cargo test -p latchkey-tests docs"
    );
}
