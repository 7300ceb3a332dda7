#!/usr/bin/env bash
# The test command of the README: installs what is missing, then checks formatting, lints and
# runs every test (including the quick forms of the paper experiments).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --features nonsmooth-solvers/sdp -- -D warnings
cargo test --workspace --features nonsmooth-solvers/sdp
