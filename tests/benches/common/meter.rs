//! What a bench phase cost beyond its throughput: the database writer's batch sizes, this
//! process's CPU and the machine's idle share.
#![allow(dead_code)]

use std::time::Duration;

use crate::support::TestDaemon;

/// The writer's counters (`/metrics`): writes, commits, and the commits of them made without an
/// fsync (batches of ceremony challenges only).
#[derive(Clone, Copy, Default)]
pub struct WriterCounts {
    pub writes: u64,
    pub commits: u64,
    pub unsynced: u64,
}

impl std::ops::Sub for WriterCounts {
    type Output = WriterCounts;
    fn sub(self, earlier: WriterCounts) -> WriterCounts {
        WriterCounts {
            writes: self.writes - earlier.writes,
            commits: self.commits - earlier.commits,
            unsynced: self.unsynced - earlier.unsynced,
        }
    }
}

pub fn writer_counts(d: &TestDaemon) -> WriterCounts {
    let body = d.metrics();
    let read = |name: &str| crate::support::counter(&body, name).unwrap_or_default();
    WriterCounts {
        writes: read("latchkey_db_writes_total"),
        commits: read("latchkey_db_commits_total"),
        unsynced: read("latchkey_db_unsynced_commits_total"),
    }
}

/// Where a phase's time went, printed under its throughput: how many writes each commit carried,
/// the CPU this process (the daemon and the bench's clients) spent per request, and how much of
/// the machine stayed idle. A figure under the ceiling is then told apart: work, or waiting.
pub struct Meter {
    writes: u64,
    commits: u64,
    cpu: Duration,
    idle: u64,
    ticks: u64,
}

impl Meter {
    pub fn read(d: &TestDaemon) -> Meter {
        let WriterCounts { writes, commits, .. } = writer_counts(d);
        // SAFETY: getrusage fills the zeroed struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
        // /proc/stat's first line: user nice system idle iowait irq softirq steal (ticks).
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let ticks: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .take(8)
            .filter_map(|v| v.parse().ok())
            .collect();
        Meter {
            writes,
            commits,
            cpu: time(usage.ru_utime) + time(usage.ru_stime),
            idle: ticks.get(3..5).map(|t| t.iter().sum()).unwrap_or_default(),
            ticks: ticks.iter().sum(),
        }
    }

    /// Runs `f` (a ceiling measured between two rounds of a phase) without counting its time,
    /// CPU or writes in this phase.
    pub fn exclude<T>(&mut self, d: &TestDaemon, f: impl FnOnce() -> T) -> T {
        let before = Meter::read(d);
        let t = f();
        let after = Meter::read(d);
        self.writes += after.writes - before.writes;
        self.commits += after.commits - before.commits;
        self.cpu += after.cpu - before.cpu;
        self.idle += after.idle - before.idle;
        self.ticks += after.ticks - before.ticks;
        t
    }

    pub fn report_since(&self, d: &TestDaemon, requests: usize) {
        let now = Meter::read(d);
        let commits = (now.commits - self.commits).max(1);
        println!(
            "    {:.1} writes per commit, {:.0} µs of CPU per request (daemon and clients), the machine {:.1}% idle",
            (now.writes - self.writes) as f64 / commits as f64,
            (now.cpu - self.cpu).as_secs_f64() * 1e6 / requests.max(1) as f64,
            100.0 * (now.idle - self.idle) as f64 / (now.ticks - self.ticks).max(1) as f64,
        );
    }
}
