#!/usr/bin/env bash
# Installs the system libraries nonsmooth needs (OpenBLAS/LAPACK for Clarabel's SDP cones,
# IPOPT for the optimal-control NLPs, cmake, a C++ compiler and libclang to build HiGHS for the
# MPCC active-set method's LPECs, pkg-config, Python 3 with venv for the bindings), if any is
# missing. Idempotent.
set -euo pipefail
packages=(pkg-config libopenblas-dev liblapack-dev libblas-dev coinor-libipopt-dev gfortran
          cmake g++ libclang-dev
          python3 python3-venv python3-pip)
bash "$(dirname "$0")/install_missing.sh" "${packages[@]}"
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust (rustup) first" >&2
  exit 1
fi
# The workspace's minimum Rust version (`rust-version` in Cargo.toml).
need="1.95"
have="$(rustc --version | awk '{print $2}')"
if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1)" != "$need" ]; then
  echo "setup: rustc $have is older than the $need this workspace needs; run \`rustup update\`" >&2
  exit 1
fi
