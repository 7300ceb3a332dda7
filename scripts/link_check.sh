#!/usr/bin/env bash
# The command-line tool built without its default features (`ocp`: IPOPT and HiGHS;
# `stability`: the SDP solver with OpenBLAS) links none of these libraries: simulation,
# impact, inverse dynamics and the remaining experiments need no optimization library.
# Builds `nonsmooth` with `--no-default-features`, runs a simulation, and checks `ldd` and the
# dependency tree (HiGHS would be linked statically, so ldd alone would not see it).
set -euo pipefail
cd "$(dirname "$0")/.."
LIBS='ipopt|highs|openblas|mumps|lapack'
cargo build --quiet -p nonsmooth-cli --no-default-features
BIN=target/debug/nonsmooth
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$BIN" simulate examples/bouncing_sphere.toml --stepper anitescu-potra --duration 0.5 --quiet --out "$OUT"
test -s "$OUT/trajectory.csv"
if ldd "$BIN" | grep -Ei "$LIBS"; then
    echo "link_check: $BIN links IPOPT, HiGHS, OpenBLAS, MUMPS or LAPACK (above)" >&2
    exit 1
fi
if cargo tree -p nonsmooth-cli --no-default-features -e normal | grep -Ei "$LIBS|blas"; then
    echo "link_check: nonsmooth-cli without default features depends on a solver library (above)" >&2
    exit 1
fi
echo "link_check: ok ($BIN without default features links neither IPOPT, HiGHS nor OpenBLAS)"
