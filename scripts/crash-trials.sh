#!/usr/bin/env bash
# Crash trials: SIGKILLs the release latchkeyd at random moments under load, restarts it on the
# same files and checks the database and every acknowledged write (tests/benches/crash_trials.rs).
#   TRIALS=100 (default)  SEED=0x… (replay a run's choices)  ONLY_TRIAL=k (one trial of that run)
# Prints `crash trials: N passed, M failed`; exits 1 when a trial failed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The bench runs the binaries next to it: target/release/latchkeyd and target/release/latchkey.
cargo build --release --workspace --bins --locked
cargo bench -p latchkey-tests --bench crash_trials --locked
