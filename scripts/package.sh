#!/usr/bin/env bash
# Builds the Debian package: the release binary, then the man pages and the
# shell completions it generates from its own command line (never written by
# hand), then `cargo deb --no-build` with the assets Cargo.toml lists.
#
#   scripts/package.sh            # -> target/debian/stripebench_<version>_<arch>.deb
#   sudo dpkg -i target/debian/stripebench_*.deb
#
# Needs cargo-deb (`cargo install cargo-deb`); says so if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo-deb >/dev/null || { echo "package.sh: cargo-deb is not installed: cargo install cargo-deb" >&2; exit 2; }
target=${CARGO_TARGET_DIR:-target}
[ "$target" = target ] || { echo "package.sh: Cargo.toml's assets name target/: unset CARGO_TARGET_DIR" >&2; exit 2; }

cargo build --release --locked
bin=target/release/stripebench
assets=target/assets
rm -rf "$assets"
mkdir -p "$assets/man" "$assets/completions"
"$bin" man >"$assets/man/stripebench.1"
# Every subcommand's page, from the list `stripebench man` refuses with.
subs=$("$bin" man --list)
for s in $subs; do
  "$bin" man "$s" >"$assets/man/stripebench-$s.1"
done
"$bin" completions bash >"$assets/completions/stripebench"
"$bin" completions zsh >"$assets/completions/_stripebench"
"$bin" completions fish >"$assets/completions/stripebench.fish"
cargo deb --no-build --no-strip
ls target/debian/stripebench_*.deb
