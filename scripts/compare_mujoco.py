"""Time per step of nonsmooth's rigid steppers (`drumwright`, `anitescu-potra`,
`qp-max-dissipation`) against MuJoCo on the same scenes, with the ratio to MuJoCo.

Scenes (`--scenes`, default all; both tools get the same geometry, masses, friction and
initial state, written from the same parameters):
- `stack`: 100 spheres (r = 0.05 m, 0.1 kg, mu = 1, the Hertz material of
  examples/drumwright_stack.toml against a rigid ground) stacked with 2 mm gaps, each moved
  horizontally by a random offset of at most `--offset` (default 1e-4 m, so it topples),
  h = 10 ms, 5 s;
- `aligned`: the same stack with no offset (it stays standing), h = 10 ms, 5 s;
- `incline`: examples/drumwright_incline.toml (one box on four spherical feet), h = 10 ms, 1 s;
- `tumble`: one box (0.2 x 0.1 x 0.05 m, 1 kg, mu = 0.5, rigid contact) thrown from 0.5 m
  with v = (1, 0, 1) m/s and spin w = (4, 8, 2) rad/s; it tumbles onto the ground plane and
  comes to rest, h = 10 ms, 2 s;
- `quadruped-mjcf`: examples/mjcf/quadruped.xml (MuJoCo loads the file itself), h = 5 ms,
  5 s, zero controls; the table also gives per stepper whether the run failed and the
  counts of unconverged and recovered steps from the CLI's summary.json;
- `quadruped-toml`: examples/quadruped.toml, h = 5 ms, 5 s (nonsmooth only);
- `piles`: 10, 100 and 1000 spheres (`--piles`) of the stack's kind at random non-overlapping
  positions in a cube above the ground (10 % of its volume filled), falling and settling,
  h = 10 ms, 3 s; a least-squares fit of log(time per step) against log(N) gives the growth
  exponent of each tool and stepper.

Each time is of the simulation loop only: MuJoCo's mj_step loop (Python calls included);
nonsmooth's `wall_time_s` from the summary.json of `nonsmooth simulate` (its run loop; only
the first and last states are recorded). Every nonsmooth run has a wall-clock limit
(`--timeout`, default 300 s) and is reported as "timeout (>T)" past it, T being the limit over
the planned steps in ms (a lower bound); a pile size is skipped for a stepper that timed out
on a smaller pile. `--duration-scale` shortens every scene.

Run with `bash scripts/compare_mujoco.sh` (it builds the CLI and installs MuJoCo into its own
virtual environment; extra arguments come here). Prints one line per run as it goes, then a
table of milliseconds per step and the ratio to MuJoCo, and writes every run to
target/compare-mujoco.json and target/compare-mujoco.csv (`--out`). Timings depend on the
machine and on whatever else runs on it.
"""

import argparse
import csv
import datetime
import json
import math
import os
import pathlib
import platform
import random
import subprocess
import sys
import tempfile
import time

import mujoco

ROOT = pathlib.Path(__file__).resolve().parents[1]
R, M, GAP = 0.05, 0.1, 0.002
STEPPERS = "drumwright,anitescu-potra,qp-max-dissipation"
SCENES = ["stack", "aligned", "incline", "tumble", "quadruped-mjcf", "quadruped-toml", "piles"]
RECOVERED = ("step_halving", "repeated_solves", "convex_fallbacks")

# The tumbling box: half extents, mass, friction, start height, initial velocity
# (linear, then angular; the box starts unrotated, so body and world axes agree).
BOX = (0.1, 0.05, 0.025)
BOX_MASS, BOX_MU, BOX_Z = 1.0, 0.5, 0.5
BOX_V = (1.0, 0.0, 1.0, 4.0, 8.0, 2.0)


def stack_positions(n, offset, seed):
    rng = random.Random(seed)
    return [
        (rng.uniform(-offset, offset), rng.uniform(-offset, offset), GAP + R + i * (2 * R + GAP))
        for i in range(n)
    ]


def pile_positions(n, seed, fill=0.1):
    """n sphere centres at random in a cube above the ground, at least 2 mm apart."""
    side = max(0.4, (n * 4 / 3 * math.pi * R**3 / fill) ** (1 / 3))
    lo, hi = -side / 2 + R, side / 2 - R
    z0 = R + 0.05
    rng = random.Random(seed)
    cell = 2 * R + GAP
    grid = {}
    out = []
    while len(out) < n:
        p = (rng.uniform(lo, hi), rng.uniform(lo, hi), rng.uniform(z0, z0 + side - 2 * R))
        key = tuple(int(math.floor(c / cell)) for c in p)
        near = (
            grid.get((key[0] + i, key[1] + j, key[2] + k), [])
            for i in (-1, 0, 1)
            for j in (-1, 0, 1)
            for k in (-1, 0, 1)
        )
        if any(math.dist(p, q) < cell for qs in near for q in qs):
            continue
        grid.setdefault(key, []).append(p)
        out.append(p)
    return out


def spheres_toml(positions):
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


def spheres_mjcf(positions, h):
    bodies = "".join(
        f'<body pos="{x!r} {y!r} {z!r}"><freejoint/><geom type="sphere" size="{R}" mass="{M}" '
        'friction="1 0.005 0.0001"/></body>'
        for (x, y, z) in positions
    )
    return (
        f'<mujoco><option timestep="{h}"/><worldbody>'
        '<geom type="plane" size="0 0 0.1" friction="1 0.005 0.0001"/>'
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


def tumble_toml():
    bx, by, bz = BOX
    return (
        '[model]\nname = "tumbling_box"\ndimension = "spatial"\n'
        "gravity = [0.0, 0.0, -9.81]\ncontact_margin = 0.01\n\n"
        f'[[materials]]\nname = "box"\nfriction = {BOX_MU}\n\n'
        '[[colliders]]\nname = "ground"\nshape = { plane = [0.0, 0.0, 1.0] }\nmaterial = "box"\n\n'
        f'[[bodies]]\nname = "box"\nmass = {BOX_MASS}\n'
        f"inertia = {{ solid_box = [{bx}, {by}, {bz}] }}\n\n"
        '[[colliders]]\nname = "box_shape"\nbody = "box"\n'
        f'shape = {{ box = [{bx}, {by}, {bz}] }}\nmaterial = "box"\n\n'
        f"[initial]\nq.box = [0.0, 0.0, {BOX_Z}, 1.0, 0.0, 0.0, 0.0]\n"
        f"v.box = [{', '.join(repr(v) for v in BOX_V)}]\n"
    )


def tumble_mjcf(h):
    bx, by, bz = BOX
    return (
        f'<mujoco><option timestep="{h}"/><worldbody>'
        f'<geom type="plane" size="0 0 0.1" friction="{BOX_MU} 0.005 0.0001"/>'
        f'<body pos="0 0 {BOX_Z}"><freejoint/>'
        f'<geom type="box" size="{bx} {by} {bz}" mass="{BOX_MASS}" '
        f'friction="{BOX_MU} 0.005 0.0001"/></body></worldbody></mujoco>'
    )


def mujoco_run(model, h, duration, qvel=None):
    """MuJoCo's milliseconds per step and the warnings it raised."""
    model.opt.timestep = h
    data = mujoco.MjData(model)
    if qvel is not None:
        data.qvel[: len(qvel)] = qvel
    steps = int(round(duration / h))
    start = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    ms = (time.perf_counter() - start) / steps * 1e3
    warnings = {
        mujoco.mjtWarning(i).name: int(w.number) for i, w in enumerate(data.warning) if w.number
    }
    return {"status": "ok", "ms_per_step": ms, "steps": steps, "warnings": warnings}


def nonsmooth_run(binary, path, stepper, h, duration, timeout):
    """Runs `nonsmooth simulate` and reads its summary.json (also written on a failed step)."""
    steps = int(round(duration / h))
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "simulate", str(path), "--stepper", stepper, "--dt", repr(h),
               "--duration", repr(duration), "--record-every", str(max(steps, 1)),
               "--quiet", "--out", out]
        start = time.perf_counter()
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            # a lower bound: the limit spread over the planned steps (setup included)
            return {"status": "timeout", "ms_per_step": None, "steps": 0,
                    "ms_per_step_min": timeout / max(steps, 1) * 1e3,
                    "error": f"no result within {timeout:g} s"}
        elapsed = time.perf_counter() - start
        summary_file = pathlib.Path(out) / "summary.json"
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    done = summary.get("steps", 0)
    res = {
        "status": "ok" if run.returncode == 0 else "failed",
        "ms_per_step": summary["wall_time_s"] / done * 1e3 if done else None,
        "steps": done,
        "process_s": elapsed,
        "recoveries": summary.get("recoveries"),
    }
    if run.returncode != 0:
        errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error")]
        res["error"] = (errors or run.stderr.strip().splitlines() or ["failed"])[-1]
        res["final_t"] = summary.get("final_t")
    return res


def scenes(args, tmp):
    """(key, label, n, h, duration, nonsmooth model file, MuJoCo model or None, MuJoCo qvel)."""
    tmp = pathlib.Path(tmp)

    def write(name, text):
        (tmp / name).write_text(text)
        return tmp / name

    out = []
    want = set(args.scenes)
    n = args.spheres
    for key, offset, label in (("stack", args.offset, "toppling"), ("aligned", 0.0, "aligned")):
        if key in want:
            pos = stack_positions(n, offset, args.seed)
            out.append((key, f"stack N={n} ({label})", n, 0.01, 5.0,
                        write(f"{key}.toml", spheres_toml(pos)),
                        mujoco.MjModel.from_xml_string(spheres_mjcf(pos, 0.01)), None))
    if "incline" in want:
        out.append(("incline", "incline box", 1, 0.01, 1.0,
                    ROOT / "examples" / "drumwright_incline.toml",
                    mujoco.MjModel.from_xml_string(incline_mjcf(0.01)), None))
    if "tumble" in want:
        out.append(("tumble", "tumbling box", 1, 0.01, 2.0, write("tumble.toml", tumble_toml()),
                    mujoco.MjModel.from_xml_string(tumble_mjcf(0.01)), BOX_V))
    if "quadruped-mjcf" in want:
        xml = ROOT / "examples" / "mjcf" / "quadruped.xml"
        out.append(("quadruped-mjcf", "quadruped.xml", 1, 0.005, 5.0, xml,
                    mujoco.MjModel.from_xml_path(str(xml)), None))
    if "quadruped-toml" in want:
        out.append(("quadruped-toml", "quadruped.toml", 1, 0.005, 5.0,
                    ROOT / "examples" / "quadruped.toml", None, None))
    if "piles" in want:
        for n in args.piles:
            pos = pile_positions(n, args.seed)
            out.append(("piles", f"pile N={n}", n, 0.01, 3.0,
                        write(f"pile{n}.toml", spheres_toml(pos)),
                        mujoco.MjModel.from_xml_string(spheres_mjcf(pos, 0.01)), None))
    return out


def recovery_text(rec):
    if not rec:
        return ""
    parts = [f"unconverged {rec.get('unconverged_steps', 0)}"]
    parts += [f"{k} {rec[k]}" for k in RECOVERED if rec.get(k)]
    if rec.get("substeps"):
        parts.append(f"substeps {rec['substeps']}")
    return ", ".join(parts)


def cell(res, ref):
    if res is None:
        return "–"
    if res["status"] == "timeout":
        return f"timeout (>{res['ms_per_step_min']:.0f})"
    if res["status"] == "skipped":
        return "skipped"
    ms = res["ms_per_step"]
    text = "–" if ms is None else f"{ms:.3f}"
    if ms is not None and ref:
        text += f" ({ms / ref:.1f}x)"
    if res["status"] == "failed":
        text += " FAILED"
    return text


def fit_exponent(points):
    """Least-squares slope of log(ms per step) against log(N)."""
    pts = [(math.log(n), math.log(ms)) for n, ms in points if ms]
    if len(pts) < 2 or len({x for x, _ in pts}) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "nonsmooth"))
    ap.add_argument("--scenes", default=",".join(SCENES),
                    help=f"comma-separated, from {','.join(SCENES)} (default: all)")
    ap.add_argument("--steppers", default=STEPPERS)
    ap.add_argument("--spheres", type=int, default=100, help="spheres in the two stacks")
    ap.add_argument("--piles", default="10,100,1000", help="sphere counts of the piles")
    ap.add_argument("--offset", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration-scale", type=float, default=1.0,
                    help="multiplies every scene's duration (e.g. 0.2 for a quick look)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="wall-clock limit of one nonsmooth run in seconds")
    ap.add_argument("--out", default=str(ROOT / "target" / "compare-mujoco"),
                    help="writes OUT.json and OUT.csv")
    args = ap.parse_args()
    args.scenes = [s for s in args.scenes.split(",") if s]
    unknown = set(args.scenes) - set(SCENES)
    if unknown:
        ap.error(f"unknown scenes {sorted(unknown)}; choose from {SCENES}")
    args.piles = [int(n) for n in args.piles.split(",") if n]
    steppers = [s for s in args.steppers.split(",") if s]

    rows = []
    timed_out = set()  # steppers that timed out on a pile: larger piles are skipped
    with tempfile.TemporaryDirectory() as tmp:
        for key, label, n, h, duration, path, mj_model, qvel in scenes(args, tmp):
            duration = round(duration * args.duration_scale, 9)
            base = {"scene": key, "label": label, "n": n, "h": h, "duration": duration}
            ref = None
            if mj_model is not None:
                res = mujoco_run(mj_model, h, duration, qvel)
                ref = res["ms_per_step"]
                rows.append({**base, "tool": "mujoco", "stepper": "mujoco", **res})
                warn = f", warnings {res['warnings']}" if res["warnings"] else ""
                print(f"{label}: MuJoCo {ref:.3f} ms per step{warn}", flush=True)
            else:
                print(f"{label}: (no MuJoCo model)", flush=True)
            for st in steppers:
                if key == "piles" and st in timed_out:
                    res = {"status": "skipped", "ms_per_step": None, "steps": 0,
                           "error": "timed out on a smaller pile"}
                else:
                    res = nonsmooth_run(args.binary, path, st, h, duration, args.timeout)
                    if key == "piles" and res["status"] == "timeout":
                        timed_out.add(st)
                if ref and res["ms_per_step"]:
                    res["ratio"] = res["ms_per_step"] / ref
                rows.append({**base, "tool": "nonsmooth", "stepper": st, **res})
                line = f"  {st}: {cell(res, ref)}"
                if res.get("recoveries"):
                    line += f"; {recovery_text(res['recoveries'])}"
                if res.get("error"):
                    line += f"; {res['error']}"
                print(line, flush=True)

    # The table: one line per scene, ms per step (ratio to MuJoCo).
    labels = list(dict.fromkeys(r["label"] for r in rows))
    width = max([len(lb) for lb in labels] + [5]) + 2
    head = f"{'scene':<{width}}{'MuJoCo':>10}" + "".join(f"{st:>24}" for st in steppers)
    print(f"\nms per step (ratio to MuJoCo)\n{head}")
    for lb in labels:
        mine = {r["stepper"]: r for r in rows if r["label"] == lb}
        mj = mine.get("mujoco")
        ref = mj["ms_per_step"] if mj else None
        line = f"{lb:<{width}}{(f'{ref:.4f}' if ref else '–'):>10}"
        line += "".join(f"{cell(mine.get(st), ref):>24}" for st in steppers)
        print(line)

    quad = [r for r in rows if r["scene"].startswith("quadruped") and r["tool"] == "nonsmooth"]
    if quad:
        print("\nquadruped runs (failure; unconverged and recovered steps from summary.json)")
        for r in quad:
            state = r["status"]
            if state == "failed":
                state += f" at t = {r.get('final_t')}: {r.get('error')}"
            print(f"  {r['label']} {r['stepper']}: {state}; {r['steps']} steps; "
                  f"{recovery_text(r.get('recoveries')) or 'no summary'}")

    exponents = {}
    if any(r["scene"] == "piles" for r in rows):
        print("\ngrowth exponent of ms per step in N over the piles (least squares, log-log)")
        for st in ["mujoco"] + steppers:
            pts = [(r["n"], r["ms_per_step"]) for r in rows
                   if r["scene"] == "piles" and r["stepper"] == st and r["status"] == "ok"]
            k = fit_exponent(pts)
            exponents[st] = {"exponent": k, "n": [n for n, _ in pts]}
            used = ", ".join(str(n) for n, _ in pts)
            print(f"  {st}: " + (f"{k:.2f} (N = {used})" if k is not None
                                 else f"too few completed piles (N = {used or 'none'})"))

    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    meta = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "commit": commit,
        "mujoco": mujoco.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "args": vars(args),
    }
    out.with_suffix(".json").write_text(
        json.dumps({"meta": meta, "runs": rows, "pile_exponents": exponents}, indent=1) + "\n")
    fields = ["scene", "label", "n", "h", "duration", "tool", "stepper", "status",
              "ms_per_step", "ms_per_step_min", "ratio", "steps", "unconverged_steps", *RECOVERED, "substeps", "final_t",
              "error"]
    with out.with_suffix(".csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**r, **(r.get("recoveries") or {})})
    print(f"\nwrote {out.with_suffix('.json')} and {out.with_suffix('.csv')}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
