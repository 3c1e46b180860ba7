#!/usr/bin/env bash
# Builds a release of Latchkey: a tarball and a Debian package (cargo-deb) of both binaries, the
# systemd unit, man pages, completions and the example configuration, with SHA-256 sums.
#
#   scripts/dist.sh                         release build, into target/dist/
#   scripts/dist.sh --out DIR               somewhere else
#   scripts/dist.sh --profile dev --no-build
#                                           package the debug binaries already built (what the
#                                           test suite installs: a release build takes minutes)
#
# Needs cargo-deb (`cargo install cargo-deb --locked`; installed when missing). The commit in
# `--version` comes from git, or from LATCHKEY_COMMIT when building outside a checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
out=target/dist
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile=${2:?--profile needs a value}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "dist.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
target_dir=${CARGO_TARGET_DIR:-target}
case "$profile" in
    dev) bin_dir=$target_dir/debug ;;
    *) bin_dir=$target_dir/$profile ;;
esac
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
suffix=$([ "$profile" = release ] && echo "" || echo "-$profile")
name=latchkey-$version-linux-$arch$suffix

if [ "$build" = 1 ]; then
    cargo build --locked --profile "$profile" -p latchkeyd -p latchkey-cli --bins
fi
for b in latchkeyd latchkey; do
    [ -x "$bin_dir/$b" ] || { echo "dist.sh: $bin_dir/$b is missing: build it, or drop --no-build" >&2; exit 1; }
done
if ! command -v cargo-deb >/dev/null; then
    echo "dist.sh: installing cargo-deb" >&2
    cargo install cargo-deb --locked --quiet
fi

# The packaged unit is contrib's with the package's paths and user; anything else that differs
# is drift between the two.
drift=$(diff <(grep -v '^#' contrib/latchkeyd.service | sed -e 's|/usr/local/bin/|/usr/bin/|' -e 's|^DynamicUser=yes|DynamicUser=no|') \
             <(grep -v '^#' packaging/debian/latchkeyd.service) || true)
if [ -n "$drift" ]; then
    echo "dist.sh: packaging/debian/latchkeyd.service differs from contrib/latchkeyd.service:" >&2
    echo "$drift" >&2
    exit 1
fi

mkdir -p "$out"
rm -f "$out/$name.tar.gz" "$out/latchkey_${version}"-*"_$arch.deb" "$out/SHA256SUMS"

# The tarball: reproducible (sorted, owned by root, dated at the commit).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/$name
mkdir -p "$root/bin" "$root/man/man1" "$root/man/man8" "$root/completions" "$root/docs"
cp "$bin_dir/latchkeyd" "$bin_dir/latchkey" "$root/bin/"
[ "$profile" = release ] || strip --strip-debug "$root/bin/latchkeyd" "$root/bin/latchkey"
cp man/*.1 "$root/man/man1/"
cp man/*.8 "$root/man/man8/"
cp contrib/completions/* "$root/completions/"
cp contrib/latchkeyd.service config.example.toml README.md CHANGELOG.md LICENSE "$root/"
cp docs/*.md "$root/docs/"
when=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$when" -C "$stage" -czf "$out/$name.tar.gz" "$name"

# The Debian package. A debug build is stripped and compressed fast: it is for the test suite.
deb_flags=()
[ "$profile" = release ] || deb_flags=(--strip --fast -Z gz)
# The system gzip/xz: cargo-deb's own compressor takes minutes over a debug build.
cargo deb --quiet --locked --no-build -p latchkeyd --profile "$profile" --output "$out/" --compress-system "${deb_flags[@]}"

(cd "$out" && sha256sum "$name.tar.gz" latchkey_"$version"-*_"$arch".deb > SHA256SUMS)
echo "dist.sh: in $out:"
sed 's/^/  /' "$out/SHA256SUMS"
