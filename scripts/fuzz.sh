#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ for FUZZ_SECONDS (default 60) each, one after another, from
# seed corpora copied out of examples/ and fuzz/regressions/ (into fuzz/corpus/, which git
# ignores). Exits non-zero when any target finds a crash (a panic, an abort, an input running
# longer than FUZZ_INPUT_TIMEOUT seconds, default 10, or one allocating more than 2 GiB);
# libFuzzer writes the crashing input to fuzz/artifacts/<target>/. Not part of
# scripts/test.sh.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and a nightly compiler, or the stable one with
# RUSTC_BOOTSTRAP=1 (set here). The ocp target links IPOPT (coinor-libipopt-dev) and HiGHS
# (built from source with cmake), the stability target OpenBLAS (libopenblas-dev), as the
# workspace does.
#
# Usage: bash scripts/fuzz.sh [TARGET ...]   (default: every target of fuzz/Cargo.toml)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
seconds="${FUZZ_SECONDS:-60}"
input_timeout="${FUZZ_INPUT_TIMEOUT:-10}"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: cargo-fuzz is missing: cargo install cargo-fuzz" >&2
  exit 2
fi

corpus="$root/fuzz/corpus"
seed() { # seed TARGET FILE...: copies the files that exist into the target's corpus
  local target="$1"; shift
  mkdir -p "$corpus/$target"
  local f
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$corpus/$target/"
  done
  return 0
}
shopt -s nullglob
seed toml_model examples/*.toml
seed urdf_model examples/urdf/*.urdf
seed mjcf_model examples/mjcf/*.xml
seed stl_mesh $(find examples -name '*.stl' | sort)
seed obj_mesh $(find examples -name '*.obj' | sort)
seed ocp_problem examples/ocp_*.toml
seed stability_model examples/stability_*.toml examples/sos_*.toml
seed inverse_model examples/id_*.toml
seed lcp_solvers
seed snapshot_state
# The inputs of crashes found and fixed (each also a regression test of its crate).
for dir in fuzz/regressions/*/; do
  seed "$(basename "$dir")" "$dir"*
done
# A binary STL seed: every ASCII STL of examples/ rewritten in the binary format (80-byte
# header, triangle count, then per triangle the normal, three vertices and a 2-byte
# attribute, little-endian float32).
for f in $(find examples -name '*.stl' | sort); do
  python3 - "$f" "$corpus/stl_mesh/$(basename "$f" .stl)_binary.stl" <<'EOF'
import re, struct, sys
text = open(sys.argv[1], encoding="ascii", errors="replace").read()
if not text.lstrip().startswith("solid"):
    sys.exit(0)
num = r"([-+0-9.eE]+)"
normals = re.findall(r"facet\s+normal\s+" + r"\s+".join([num] * 3), text)
vertices = re.findall(r"vertex\s+" + r"\s+".join([num] * 3), text)
if len(vertices) != 3 * len(normals):
    sys.exit(0)
out = bytearray(b"binary STL seed".ljust(80, b"\0"))
out += struct.pack("<I", len(normals))
for k, n in enumerate(normals):
    values = [float(x) for x in n]
    for v in vertices[3 * k:3 * k + 3]:
        values += [float(x) for x in v]
    out += struct.pack("<12f", *values) + b"\0\0"
open(sys.argv[2], "wb").write(out)
EOF
done

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi

cd fuzz
# Built once; the targets then run from their binaries (no rebuild between targets).
cargo fuzz build -O
bin="target/$(rustc -vV | sed -n 's/^host: //p')/release"
failed=()
for target in "${targets[@]}"; do
  echo "fuzz.sh: $target for ${seconds} s" >&2
  mkdir -p "artifacts/$target"
  if ! "$bin/$target" "corpus/$target" -artifact_prefix="artifacts/$target/" \
      -max_total_time="$seconds" -timeout="$input_timeout" -rss_limit_mb=2048 \
      -malloc_limit_mb=2048 -print_final_stats=1; then
    failed+=("$target")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: crashes in: ${failed[*]} (inputs in fuzz/artifacts/<target>/)" >&2
  exit 1
fi
echo "fuzz.sh: every target (${targets[*]}) ran ${seconds} s without a crash" >&2
