#!/usr/bin/env bash
# The main job of the README: installs what is missing, builds nonsmooth in release mode and
# reproduces every registered paper experiment into reproduce-out/ (report.html + per-experiment
# result.json, CSV and SVG). Extra arguments are passed on, e.g. `--quick`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo run --release -p nonsmooth-cli --features nonsmooth-solvers/sdp -- reproduce --all --out reproduce-out "$@"
