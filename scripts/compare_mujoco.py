"""Time per step of nonsmooth's rigid steppers against MuJoCo on the same scenes (issue #31's
speed goal: every rigid stepper within 10x MuJoCo, `drumwright` within 3x).

Scenes (written for both tools from the same parameters):
- `stack`: N spheres (r = 0.05 m, 0.1 kg, mu = 1) stacked with 2 mm gaps, each moved
  horizontally by a random offset of at most `--offset` (default 1e-4 m, so it topples),
  h = 10 ms, 5 s;
- `incline`: examples/drumwright_incline.toml (one box on four spherical feet), h = 10 ms, 1 s.

Run with `bash scripts/compare_mujoco.sh` (it builds the CLI and installs MuJoCo into its own
virtual environment). Prints one line per tool and stepper: milliseconds per step (the
simulation loop only: MuJoCo's mj_step loop; nonsmooth's `summary.json` wall time of the run
loop), and the ratio to MuJoCo.
"""

import argparse
import json
import pathlib
import random
import subprocess
import sys
import tempfile
import time

import mujoco

ROOT = pathlib.Path(__file__).resolve().parents[1]
R, M, GAP = 0.05, 0.1, 0.002


def stack_positions(n, offset, seed):
    rng = random.Random(seed)
    return [
        (rng.uniform(-offset, offset), rng.uniform(-offset, offset), GAP + R + i * (2 * R + GAP))
        for i in range(n)
    ]


def stack_toml(positions):
    src = (ROOT / "examples" / "drumwright_stack.toml").read_text()
    head = src[: src.index("[[bodies]]")]
    out = [head]
    for i, _ in enumerate(positions):
        out.append(
            f'[[bodies]]\nname = "s{i}"\nmass = {M}\ninertia = {{ solid_sphere = {R} }}\n\n'
            f'[[colliders]]\nname = "c{i}"\nbody = "s{i}"\nshape = {{ sphere = {R} }}\n'
            'material = "steel"\n\n'
        )
    out.append("[initial]\n")
    for i, (x, y, z) in enumerate(positions):
        out.append(f"q.s{i} = [{x!r}, {y!r}, {z!r}, 1.0, 0.0, 0.0, 0.0]\n")
    return "".join(out)


def stack_mjcf(positions, h):
    bodies = "".join(
        f'<body pos="{x} {y} {z}"><freejoint/><geom type="sphere" size="{R}" mass="{M}" '
        'friction="1 0.005 0.0001"/></body>'
        for (x, y, z) in positions
    )
    return (
        f'<mujoco><option timestep="{h}"/><worldbody>'
        '<geom type="plane" size="10 10 0.1" friction="1 0.005 0.0001"/>'
        f"{bodies}</worldbody></mujoco>"
    )


def incline_mjcf(h):
    # the box of examples/drumwright_incline.toml: gravity tilted by 15 degrees, 1 kg box on
    # four small spheres, mu = 0.25
    return (
        f'<mujoco><option timestep="{h}" gravity="-2.5364246 0 -9.4660713"/><worldbody>'
        '<geom type="plane" size="10 10 0.1" friction="0.25 0.005 0.0001"/>'
        '<body pos="0 0 0.06"><freejoint/>'
        '<geom type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"/>'
        + "".join(
            f'<geom type="sphere" size="0.01" pos="{sx * 0.05} {sy * 0.05} -0.05" mass="0" '
            'friction="0.25 0.005 0.0001"/>'
            for sx in (-1, 1)
            for sy in (-1, 1)
        )
        + "</body></worldbody></mujoco>"
    )


def mujoco_ms_per_step(xml, steps):
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    start = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    return (time.perf_counter() - start) / steps * 1e3


def nonsmooth_ms_per_step(binary, path, stepper, h, duration):
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            [binary, "simulate", str(path), "--stepper", stepper, "--dt", str(h),
             "--duration", str(duration), "--quiet", "--json", "--out", out],
            capture_output=True, text=True,
        )
        if run.returncode != 0:
            return None, run.stderr.strip().splitlines()[-1] if run.stderr else "failed"
        summary = json.loads(run.stdout)
        return summary["wall_time_s"] / summary["steps"] * 1e3, summary.get("recoveries")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "nonsmooth"))
    ap.add_argument("--spheres", type=int, default=100)
    ap.add_argument("--offset", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steppers", default="drumwright,anitescu-potra,qp-max-dissipation")
    args = ap.parse_args()
    h = 0.01
    steppers = args.steppers.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        positions = stack_positions(args.spheres, args.offset, args.seed)
        stack_file = pathlib.Path(tmp) / "stack.toml"
        stack_file.write_text(stack_toml(positions))
        scenes = [
            (f"stack N={args.spheres} (toppling)", stack_mjcf(positions, h), stack_file, 5.0),
            ("incline box", incline_mjcf(h), ROOT / "examples" / "drumwright_incline.toml", 1.0),
        ]
        for name, xml, path, duration in scenes:
            ref = mujoco_ms_per_step(xml, int(round(duration / h)))
            print(f"{name}: MuJoCo {ref:.3f} ms per step")
            for st in steppers:
                ms, info = nonsmooth_ms_per_step(args.binary, path, st, h, duration)
                if ms is None:
                    print(f"  {st}: error: {info}")
                else:
                    print(f"  {st}: {ms:.3f} ms per step ({ms / ref:.1f}x MuJoCo), recoveries {info}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
