#!/usr/bin/env bash
# A program on the simulation crates alone links neither IPOPT nor OpenBLAS (they come with
# the optional layers: `nonsmooth-solvers` features `ipopt` and `sdp`, enabled by the
# optimal-control and stability crates only). Builds the `drop_model` example of
# nonsmooth-sim on its own (its own feature set), runs it, and checks `ldd`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet -p nonsmooth-sim --example drop_model
BIN=target/debug/examples/drop_model
"$BIN" examples/bouncing_sphere.toml 0.5 >/dev/null
if ldd "$BIN" | grep -Ei 'ipopt|openblas'; then
    echo "link_check: $BIN links IPOPT or OpenBLAS (above)" >&2
    exit 1
fi
echo "link_check: ok ($BIN links neither IPOPT nor OpenBLAS)"
