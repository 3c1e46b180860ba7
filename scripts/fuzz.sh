#!/usr/bin/env bash
# Builds every fuzz target of fuzz/ and runs each, one after the other, for N seconds
# (argument 1, else $FUZZ_SECONDS, else 30). Needs cargo-fuzz (installed when missing) and works
# on stable Rust: RUSTC_BOOTSTRAP=1 lets stable rustc take the -Z flags cargo-fuzz passes
# (-Zsanitizer=address), and the ASan runtime ships with std for x86_64-unknown-linux-gnu.
# When the toolchain cannot build the fuzzers with libFuzzer, says why and exits 0; a target that
# does not compile, or a crash, exits 1.
#
#   scripts/fuzz.sh [SECONDS]       FUZZ_SANITIZER=none scripts/fuzz.sh   (no ASan)
#
# New corpus entries go to fuzz/corpus/<target>/ (ignored by git); the committed seeds in
# fuzz/seeds/<target>/ are read, never written. Crashes land in fuzz/artifacts/<target>/.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"

seconds="${1:-${FUZZ_SECONDS:-30}}"
sanitizer="${FUZZ_SANITIZER:-address}"
export RUSTC_BOOTSTRAP=1
target_dir=()
[ -n "${CARGO_TARGET_DIR:-}" ] && target_dir=(--target-dir "$CARGO_TARGET_DIR/fuzz")

skip() {
    printf 'fuzz: skipped: %s\n' "$*" >&2
    exit 0
}

step() { printf '\n==> %s\n' "$*"; }

if ! cargo fuzz --version >/dev/null 2>&1; then
    step "installing cargo-fuzz"
    cargo install cargo-fuzz --locked || skip "cargo-fuzz is not installed and could not be installed"
fi
case "$(rustc -vV | sed -n 's/^host: //p')" in
    x86_64-unknown-linux-gnu | aarch64-unknown-linux-gnu | x86_64-apple-darwin | aarch64-apple-darwin) ;;
    *) skip "libFuzzer targets need a Linux or macOS host with a sanitizer runtime" ;;
esac

# Our own code first, without the sanitizer: a target that no longer compiles is a failure of
# this repository, not of the toolchain, and must not pass for a skip.
step "check fuzz targets"
cargo check --bins --locked "${target_dir[@]}" || {
    echo "fuzz: the fuzz targets do not compile (see above)" >&2
    exit 1
}

step "build fuzz targets (sanitizer: $sanitizer)"
if ! cargo fuzz build -s "$sanitizer" "${target_dir[@]}"; then
    if [ "$sanitizer" != none ]; then
        echo "fuzz: building with -s $sanitizer failed; trying without a sanitizer" >&2
        sanitizer=none
        cargo fuzz build -s none "${target_dir[@]}" || skip "cargo fuzz build fails on $(rustc --version)"
    else
        skip "cargo fuzz build fails on $(rustc --version)"
    fi
fi

failed=()
for target in $(cargo fuzz list); do
    step "fuzz $target for ${seconds}s"
    mkdir -p "corpus/$target"
    seeds=()
    [ -d "seeds/$target" ] && seeds=("seeds/$target")
    if ! cargo fuzz run -s "$sanitizer" "${target_dir[@]}" "$target" "corpus/$target" "${seeds[@]}" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1; then
        failed+=("$target")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    printf '\nfuzz: crashes or errors in: %s (inputs in fuzz/artifacts/)\n' "${failed[*]}" >&2
    exit 1
fi
printf '\nfuzz: every target ran %ss without a crash\n' "$seconds"
