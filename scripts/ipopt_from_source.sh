#!/usr/bin/env bash
# Builds IPOPT 3.14 from source as a static library (libipopt.a) with Debian's sequential MUMPS
# (libmumps-seq-dev) and LAPACK/BLAS, to try in place of Debian's coinor-libipopt-dev (3.11).
# The sources are the ones the `ipopt-src` crate ships, fetched by cargo from crates.io; that
# crate has no configure script, so this writes IPOPT's config.h, compiles the library's
# sources with make and writes ipopt.pc itself. MUMPS, LAPACK and BLAS stay shared system
# libraries, so the binaries need no LD_LIBRARY_PATH. Not part of the tests.
#
#   bash scripts/ipopt_from_source.sh [PREFIX]      (default target/ipopt-3.14)
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cargo build --release -p nonsmooth-cli
#
# JOBS sets make's parallel jobs (default: the number of cores). Idempotent: a PREFIX that
# already holds this version is left as it is; the objects stay in PREFIX/build.
set -euo pipefail
cd "$(dirname "$0")/.."

CRATE_VERSION="0.2.3+3.14.16"
IPOPT_VERSION="${CRATE_VERSION#*+}"
PREFIX="${1:-target/ipopt-3.14}"
mkdir -p "$PREFIX"
PREFIX="$(cd "$PREFIX" && pwd)"
JOBS="${JOBS:-$(nproc)}"
PC="$PREFIX/lib/pkgconfig/ipopt.pc"

if [ -f "$PREFIX/lib/libipopt.a" ] && [ -f "$PC" ] \
   && grep -qx "Version: $IPOPT_VERSION" "$PC"; then
  echo "ipopt_from_source: IPOPT $IPOPT_VERSION is already in $PREFIX"
  echo "ipopt_from_source: PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig"
  exit 0
fi

# Build tools and the libraries IPOPT links.
packages=(g++ make pkg-config libmumps-seq-dev liblapack-dev libblas-dev)
bash scripts/install_missing.sh "${packages[@]}"

# The sources: cargo fetches the crate (without its default features, which would build
# MUMPS and OpenBLAS too) for a throwaway package, and `cargo metadata` says where it unpacked.
fetch="$PREFIX/build/fetch"
mkdir -p "$fetch/src"
cat > "$fetch/Cargo.toml" <<EOF
[package]
name = "ipopt-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
ipopt-src = { version = "=$CRATE_VERSION", default-features = false }

[workspace]
EOF
: > "$fetch/src/lib.rs"
cargo fetch --quiet --manifest-path "$fetch/Cargo.toml"
manifest="$(cargo metadata --format-version 1 --manifest-path "$fetch/Cargo.toml" \
  | python3 -c 'import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "ipopt-src":
        print(p["manifest_path"])')"
SRC="$(dirname "$manifest")/Ipopt/src"
[ -f "$SRC/Makefile.am" ] || { echo "ipopt_from_source: no IPOPT sources at $SRC" >&2; exit 1; }
echo "ipopt_from_source: IPOPT $IPOPT_VERSION sources in $SRC"

# What IPOPT's configure would find on Debian: gfortran's name mangling, LAPACK, MUMPS (the
# sequential one, so no MPI initialisation), the HSL loader for ma27/ma57/... at run time.
BUILD="$PREFIX/build/obj"
mkdir -p "$BUILD/include"
IFS=. read -r major minor release <<< "$IPOPT_VERSION"
cat > "$BUILD/include/config.h" <<EOF
#define HAVE_CFLOAT 1
#define HAVE_CMATH 1
#define HAVE_DLFCN_H 1
#define HAVE_FLOAT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_MATH_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDIO_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_VSNPRINTF 1
#define STDC_HEADERS 1
#define SIZEOF_INT_P 8
#define F77_FUNC(name,NAME) name ## _
#define F77_FUNC_(name,NAME) name ## _
#define IPOPT_LAPACK_FUNC(name,NAME) name ## _
#define IPOPT_LAPACK_FUNC_(name,NAME) name ## _
#define IPOPT_HSL_FUNC(name,NAME) name ## _
#define IPOPT_HSL_FUNC_(name,NAME) name ## _
#define IPOPT_C_FINITE std::isfinite
#define IPOPT_HAS_LAPACK 1
#define IPOPT_HAS_MUMPS 1
#define IPOPT_HAS_LINEARSOLVERLOADER 1
#define IPOPT_HAS_DRAND48 1
#define IPOPT_HAS_RAND 1
#define IPOPT_HAS_STD__RAND 1
#define IPOPT_HAS_VA_COPY 1
#define IPOPT_HAS_FEENABLEEXCEPT 1
#define IPOPTLIB_EXPORT __attribute__((__visibility__("default")))
#define IPOPT_VERSION "$IPOPT_VERSION"
#define IPOPT_VERSION_MAJOR $major
#define IPOPT_VERSION_MINOR $minor
#define IPOPT_VERSION_RELEASE $release
#define PACKAGE_NAME "Ipopt"
#define PACKAGE_TARNAME "ipopt"
#define PACKAGE_VERSION "$IPOPT_VERSION"
#define PACKAGE_STRING "Ipopt $IPOPT_VERSION"
#define PACKAGE_BUGREPORT "https://github.com/coin-or/Ipopt/issues/new"
#define PACKAGE_URL "https://github.com/coin-or/Ipopt"
EOF
# The public configuration header, installed as IpoptConfig.h.
cat > "$BUILD/include/config_ipopt.h" <<EOF
#ifndef __CONFIG_IPOPT_H__
#define __CONFIG_IPOPT_H__
#define IPOPT_VERSION "$IPOPT_VERSION"
#define IPOPT_VERSION_MAJOR $major
#define IPOPT_VERSION_MINOR $minor
#define IPOPT_VERSION_RELEASE $release
#define IPOPTLIB_EXPORT
#define IPOPT_FORTRAN_INTEGER_TYPE ipindex
#endif
EOF

# The library's sources as IPOPT's Makefile.am lists them, for a double-precision, 32-bit
# index build with MUMPS and without the optional solvers that are not here.
sources=$(grep -oE '[A-Za-z0-9_/]+\.(cpp|c)\b' "$SRC/Makefile.am" \
  | grep -vE 'Inexact/|PardisoMKL|Ma28|Wsmp|Spral|StdJInterface' | sort -u)
objects=()
rules=""
for s in $sources; do
  o="${s%.*}.o"
  objects+=("$o")
  case "$s" in
    *.c) rules+="$o: \$(SRC)/$s"$'\n\t''@mkdir -p $(@D) && $(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@'$'\n' ;;
    *)   rules+="$o: \$(SRC)/$s"$'\n\t''@mkdir -p $(@D) && $(CXX) $(CXXFLAGS) $(CPPFLAGS) -c $< -o $@'$'\n' ;;
  esac
done
includes=""
for d in Common LinAlg LinAlg/TMatrices Algorithm Algorithm/LinearSolvers Interfaces \
         contrib/CGPenalty; do
  includes+=" -I\$(SRC)/$d"
done
cat > "$BUILD/Makefile" <<EOF
SRC = $SRC
CC = gcc
CXX = g++
CFLAGS = -O2 -fPIC
CXXFLAGS = -O2 -fPIC
CPPFLAGS = -DNDEBUG -DHAVE_CONFIG_H -DIPOPTLIB_BUILD -I$BUILD/include$includes -I/usr/include/mumps_seq

libipopt.a: ${objects[*]}
	@rm -f \$@ && ar rcs \$@ \$^ && echo "ar: \$@"

$rules
EOF
make -C "$BUILD" -j"$JOBS" libipopt.a

# Install: the library, the public headers (as Makefile.am lists them) and ipopt.pc.
mkdir -p "$PREFIX/lib/pkgconfig" "$PREFIX/include/coin-or"
cp "$BUILD/libipopt.a" "$PREFIX/lib/"
headers=$(sed -n '/^includeipopt_HEADERS/,/^$/p' "$SRC/Makefile.am" \
  | grep -oE '[A-Za-z0-9_/]+\.(hpp|h|inc)\b')
for h in $headers; do
  cp "$SRC/$h" "$PREFIX/include/coin-or/"
done
cp "$BUILD/include/config_ipopt.h" "$PREFIX/include/coin-or/IpoptConfig.h"
cat > "$PC" <<EOF
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include/coin-or

Name: Ipopt
Description: Interior Point Optimizer (static; Debian's sequential MUMPS, LAPACK, BLAS)
URL: https://github.com/coin-or/Ipopt
Version: $IPOPT_VERSION
Cflags: -I\${includedir}
Libs: -L\${libdir} -lipopt -ldmumps_seq -lmumps_common_seq -llapack -lblas -lstdc++ -lm -ldl
EOF
echo "ipopt_from_source: IPOPT $IPOPT_VERSION installed in $PREFIX"
echo "ipopt_from_source: PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig"
