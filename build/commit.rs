// The commit a binary was built from, for `--version` and `latchkey status`: `LATCHKEY_COMMIT`
// when set (a build from the release tarball, which has no .git), else what git says of the
// checkout, else "unknown". Shared by the build scripts of `latchkeyd` and `latchkey` (include!),
// the two crates that print it, so that a new commit rebuilds only them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=LATCHKEY_COMMIT");
    let commit = std::env::var("LATCHKEY_COMMIT").ok().filter(|c| !c.trim().is_empty()).or_else(git_commit);
    println!("cargo:rustc-env=LATCHKEY_COMMIT={}", commit.as_deref().unwrap_or("unknown").trim());
}

fn git(args: &[&str]) -> Option<String> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let out = Command::new("git").arg("-C").arg(manifest).args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn git_commit() -> Option<String> {
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    // Rerun when HEAD moves: HEAD itself, the branch it names, and packed refs (`--git-path`
    // knows where each is, in a worktree too). Only files that exist: cargo reruns a script on
    // every build when a path it watches is missing.
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in &watched {
        if let Some(path) = git(&["rev-parse", "--git-path", name]).map(|p| manifest.join(p))
            && Path::new(&path).exists()
        {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Some(commit)
}
