#!/usr/bin/env bash
# Published robots run under the default stepper (release CLI):
# - solo12 (example-robot-data's URDF, collision meshes found through package://) placed on a
#   ground plane in a model file, 5 s with zero torques: the run completes and the trunk
#   stays above TRUNK_MIN;
# - the DeepMind Control Suite's humanoid (dm_control's humanoid.xml, its own floor) falls
#   from its initial pose with zero torques for 15 s: the run completes and ends at rest, every
#   velocity below V_REST except the trunk's horizontal ones (its geoms have condim="1":
#   frictionless contacts, so the body lying on the floor keeps sliding at the horizontal
#   speed the fall left it, 3.7 cm/s; those two are reported).
# Writes target/published-robots/{solo12,humanoid}/ (summary.json, trajectory.csv). Exit code
# 3 means PyPI could not be reached: nothing was run. Not in scripts/test.sh (its run time;
# docs/testing.md gives the measurements).
set -euo pipefail
cd "$(dirname "$0")/.."
# solo12 lands standing on its straight legs with the trunk at 0.336 m; 0.2 m is well above
# a collapsed robot.
TRUNK_MIN="${TRUNK_MIN:-0.2}"
# Seconds of wall time each run may take before it counts as not completing.
RUN_LIMIT="${RUN_LIMIT:-600}"
# The robot's pose in the model file: its floating joint's coordinates count from there.
DROP_Z=0.4
V_REST="${V_REST:-0.05}"
OUT="$(pwd)/target/published-robots"
rm -rf "$OUT"
mkdir -p "$OUT"
source scripts/published_robots.sh
fetch_published_robots published_robots_run.sh "$OUT/dm-control" example-robot-data numpy
cat > "$OUT/solo12_on_ground.toml" <<EOF
# solo12 as published in example-robot-data (collision meshes through package://), floating,
# dropped from 0.4 m (its straight legs are 0.32 m long below the trunk) onto a ground plane;
# zero joint torques.
[model]
name = "solo12_on_ground"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]

[[colliders]]
name = "ground"
shape = { plane = [0.0, 0.0, 1.0] }

[[robots]]
urdf = "$ROBOTS/solo_description/robots/solo12.urdf"
floating = true
pose = { xyz = [0.0, 0.0, $DROP_Z] }
EOF
cargo build --quiet --release --workspace --features nonsmooth-solvers/sdp
NONSMOOTH="target/release/nonsmooth"
run() {
    local name="$1" file="$2" duration="$3"
    local start=$SECONDS
    if ! timeout "$RUN_LIMIT" "$NONSMOOTH" simulate "$file" --duration "$duration" \
        --out "$OUT/$name"; then
        echo "published_robots_run: $name did not complete ${duration} s within $RUN_LIMIT s" >&2
        return 1
    fi
    echo "published_robots_run: $name ran in $((SECONDS - start)) s (wall, with loading)"
}
run solo12 "$OUT/solo12_on_ground.toml" 5
run humanoid "$OUT/dm-control/dm_control/suite/humanoid.xml" 15
"$VENV/bin/python" - "$OUT" "$TRUNK_MIN" "$V_REST" "$DROP_Z" <<'EOF'
import csv, json, sys
out, trunk_min, v_rest, drop_z = sys.argv[1], *map(float, sys.argv[2:])
# Where each scene's floating joint has its zero height (an MJCF free joint is absolute).
offset = {"solo12": drop_z, "humanoid": 0.0}
failed = []
for name in ["solo12", "humanoid"]:
    s = json.load(open(f"{out}/{name}/summary.json"))
    q, v = s["final_q"], s["final_v"]
    # The floating base's height: the `.z` coordinate of the first floating joint.
    base_z = next(n for n in s["q_names"] if n.endswith(".z"))
    z = offset[name] + q[s["q_names"].index(base_z)]
    with open(f"{out}/{name}/trajectory.csv") as f:
        rows = list(csv.reader(f))
    zcol = rows[0].index(f"q:{base_z}")
    zs = [offset[name] + float(r[zcol]) for r in rows[1:]]
    # Frictionless contacts leave the base's horizontal velocity free (condim="1").
    base = base_z[: -len(".z")]
    free = {f"{base}.vx", f"{base}.vy"} if name == "humanoid" else set()
    vmax = max(abs(x) for x, n in zip(v, s["v_names"]) if n not in free)
    drift = [v[s["v_names"].index(n)] for n in sorted(free)]
    print(
        f"{name}: base `{base_z}`; stepper {s['stepper']} ({s['stepper_choice']['reason']}), "
        f"{s['steps']} steps of {s['dt']} s, wall {s['wall_time_s']:.1f} s; "
        f"base height final {z:.4f} m, lowest {min(zs):.4f} m; final |v|inf {vmax:.2e} "
        f"(horizontal sliding left out: {drift}); "
        f"recoveries {json.dumps(s['recoveries'])}"
    )
    if name == "solo12" and min(zs) < trunk_min:
        failed.append(f"solo12's trunk went down to {min(zs):.4f} m (< {trunk_min} m)")
    if name == "humanoid" and vmax > v_rest:
        failed.append(f"the humanoid is not at rest (|v|inf = {vmax:.2e} > {v_rest})")
if failed:
    sys.exit("published_robots_run: " + "; ".join(failed))
print("published_robots_run: both scenes ran and passed their checks")
EOF
