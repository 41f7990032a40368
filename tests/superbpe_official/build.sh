#!/usr/bin/env bash
# Build the official SuperBPE training recipe on its tokenizers fork, offline, for
# tests/test_superbpe.py::test_byte_for_byte_against_the_official_trainer.
#
#   bash tests/superbpe_official/build.sh FORK_CHECKOUT BUILD_DIR
#   REFBPE_SUPERBPE_TRAINER=BUILD_DIR/trainer/target/release/superbpe-train pytest tests/test_superbpe.py
#
# FORK_CHECKOUT: alisawuffles/tokenizers-superbpe at 757f2a5 (the commit PythonNut/superbpe's
# submodule pins). Cargo reads Debian 12's packaged crates (apt's librust-*-dev) instead of
# crates.io; fork.patch lowers the fork's versions to those and drops what the recipe does not
# use; shims/ stand in for the crates Debian lacks. README.md lists every change.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
fork="$(cd "$1" && pwd)"
out="$2"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

apt-get install -y --no-install-recommends libonig-dev pkg-config \
    librust-aho-corasick-dev librust-derive-builder-dev librust-getrandom-dev librust-itertools-dev \
    librust-lazy-static-dev librust-log-dev librust-onig-dev librust-paste-dev librust-rand-dev \
    librust-rayon-dev librust-regex-dev librust-regex-syntax-dev librust-serde-dev librust-serde-json-dev \
    librust-thiserror-dev librust-unicode-categories-dev librust-unicode-segmentation-dev >/dev/null

rm -rf "$out/fork" "$out/shims" "$out/trainer"
mkdir -p "$out/fork"
cp -r "$fork/tokenizers" "$out/fork/tokenizers"
cp -r "$here/shims" "$here/trainer" "$out/"
(cd "$out/fork/tokenizers" && rm -rf benches examples tests && patch -p1 -s <"$here/fork.patch")

mkdir -p "$out/cargo-home"
cat >"$out/cargo-home/config.toml" <<'TOML'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
TOML
cd "$out/trainer"
CARGO_HOME="$out/cargo-home" cargo build --release -q
echo "$out/trainer/target/release/superbpe-train"
