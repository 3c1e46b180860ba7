//! One daemon per database: an exclusive `flock` on `<database>.lock`, held for the life of the
//! process and released by the kernel however it ends (even `kill -9`). The file holds the PID of
//! the holder so that a refused second daemon can name it. PostgreSQL scale-out is another mode.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct DataLock {
    _file: File,
    pub path: PathBuf,
}

/// The lock file of a database file: beside the file itself, symbolic links and `..` resolved,
/// so that two spellings of one database (a link, a relative path) share one lock.
pub fn path_for(database: &Path) -> PathBuf {
    let database = real_path(database);
    let mut name = database.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "latchkey.db".into());
    name.push(".lock");
    database.with_file_name(name)
}

/// `path` with its links resolved: the file's own when it exists, else its directory's (a first
/// start), else as given (its directory is created by [`acquire`]).
fn real_path(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent().filter(|d| !d.as_os_str().is_empty()), path.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir).map_or_else(|_| path.to_owned(), |d| d.join(name)),
        _ => path.to_owned(),
    }
}

/// Takes the lock of `database` (creating its directory if needed), or says who holds it.
pub fn acquire(database: &Path) -> Result<DataLock, String> {
    lock(database).map_err(|refusal| match refusal {
        Refusal::Held(holder) => format!(
            "{holder} is already using the database {}: one daemon per database file. Stop it first, or give this \
             one its own --data-dir (or storage.path)",
            database.display()
        ),
        Refusal::Failed(message) => message,
    })
}

/// Takes the lock of `database` for a tool that needs the daemon stopped (`migrate-store`):
/// refused, with what to do, while a daemon runs on it.
pub fn acquire_stopped(database: &Path, tool: &str) -> Result<DataLock, String> {
    lock(database).map_err(|refusal| match refusal {
        Refusal::Held(holder) => format!(
            "{holder} is running on the database {}: {tool} needs the daemon stopped. Stop it (e.g. \
             `systemctl stop latchkeyd`) and run {tool} again",
            database.display()
        ),
        Refusal::Failed(message) => message,
    })
}

enum Refusal {
    /// Someone holds the lock: "another latchkeyd (PID n)" or "another process".
    Held(String),
    Failed(String),
}

fn lock(database: &Path) -> Result<DataLock, Refusal> {
    let path = path_for(database);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Refusal::Failed(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .map_err(|e| Refusal::Failed(format!("cannot open the lock file {}: {e}", path.display())))?;
    if !flock_soon(&file) {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = match holder.trim() {
            "" => "another process".to_owned(),
            pid => format!("another latchkeyd (PID {pid})"),
        };
        return Err(Refusal::Held(holder));
    }
    let pid = std::process::id();
    let written = file
        .set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{pid}"))
        .and_then(|()| file.sync_all());
    if let Err(e) = written {
        return Err(Refusal::Failed(format!("cannot write the lock file {}: {e}", path.display())));
    }
    Ok(DataLock { _file: file, path })
}

/// How long a held lock is tried again before the start is refused.
const HELD_FOR_A_MOMENT: Duration = Duration::from_millis(300);

/// Takes the exclusive lock, trying again for a moment while someone else holds it. A lock can
/// outlive its daemon briefly: a process forked from the holder's (a supervisor or a test
/// harness that runs the daemon in-process and spawns other programs) keeps a copy of the
/// descriptor until it execs, and a restarted daemon would otherwise be refused in that window.
fn flock_soon(file: &File) -> bool {
    let deadline = Instant::now() + HELD_FOR_A_MOMENT;
    loop {
        // The standard library's advisory lock: flock(2) on Linux, as other programs see it.
        if file.try_lock().is_ok() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_with_the_pid() {
        let dir = std::env::temp_dir().join(format!("lk-lock-{}", std::process::id()));
        let db = dir.join("latchkey.db");
        let first = acquire(&db).unwrap();
        assert_eq!(first.path, dir.join("latchkey.db.lock"));
        // flock locks belong to the open file description: a second open in this process conflicts.
        let err = acquire(&db).unwrap_err();
        assert!(err.contains(&format!("PID {}", std::process::id())), "{err}");
        drop(first);
        assert!(acquire(&db).is_ok(), "released when dropped");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_link_to_the_database_or_another_spelling_of_it_shares_its_lock() {
        let dir = std::env::temp_dir().join(format!("lk-lock-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("other")).unwrap();
        let db = dir.join("latchkey.db");
        std::fs::write(&db, b"").unwrap();
        let link = dir.join("other").join("renamed.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let first = acquire(&db).unwrap();
        for other in [link, dir.join("other").join("..").join("latchkey.db")] {
            let err = acquire(&other).unwrap_err();
            assert!(err.contains(&format!("PID {}", std::process::id())), "{}: {err}", other.display());
        }
        drop(first);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lock_released_a_moment_later_is_taken() {
        let dir = std::env::temp_dir().join(format!("lk-lock-moment-{}", std::process::id()));
        let db = dir.join("latchkey.db");
        let first = acquire(&db).unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(first);
        });
        let second = acquire(&db);
        releaser.join().unwrap();
        assert!(second.is_ok(), "{second:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
