#!/usr/bin/env bash
# Installs the system libraries nonsmooth needs (OpenBLAS/LAPACK for Clarabel's SDP cones,
# IPOPT for the optimal-control NLPs, cmake, a C++ compiler and libclang to build HiGHS for the
# MPCC active-set method's LPECs, pkg-config, Python 3 with venv for the bindings), if any is
# missing. Idempotent.
set -euo pipefail
packages=(pkg-config libopenblas-dev liblapack-dev libblas-dev coinor-libipopt-dev gfortran
          cmake g++ libclang-dev
          python3 python3-venv python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi
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
