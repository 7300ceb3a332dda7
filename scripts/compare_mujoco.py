"""Time per step of nonsmooth's rigid steppers (`drumwright`, `anitescu-potra`,
`qp-max-dissipation`) against MuJoCo on the same scenes, with the ratio to MuJoCo, and what
that speed costs in accuracy against closed forms.

Speed scenes (`--scenes`, default all; both tools get the same geometry, masses, friction and
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

Accuracy scenes (h = 10 ms; MuJoCo runs each case twice, with its default pyramidal cone
and with `<option cone="elliptic"/>`, in the same run as every stepper):
- `incline-mu`: the box of examples/drumwright_incline.toml (read from the file; its friction
  set to mu = 0, 0.125, 0.25, 0.375, 0.5) released at rest, 1 s: the slide along the slope
  against 1/2 a t^2, a = |g| (sin theta - mu cos theta)+ (|g| and theta from the file's
  gravity); the total normal force of the step farthest from m |g| cos theta (what the feet
  carry at rest); the largest drift normal to the plane;
- `box-stop`: a box (0.2 x 0.2 x 0.1 m, 1 kg, rigid contact) launched along a level plane at
  (v0, mu) = (1, 0.5), (2, 0.3), (3, 0.2) along x and (2, 0.3) along the diagonal, 2 s: the
  distance travelled against v0^2/(2 mu g) (v0 t - mu g t^2/2 while still sliding);
- `tower`: three 0.1 m cubes (1 kg, mu = 0.5, rigid contact) stacked at rest on level ground
  and with gravity tilted by 10 degrees (they must stick), 2 s: each box's largest horizontal
  and vertical drift (reference 0, limit of interest 0.5 mm).
MuJoCo has no Hertz law and no rigid contact: it keeps its default soft contact throughout.
Each accuracy case is run twice per tool: timed with only the first and last states recorded,
then recording every step (nonsmooth: trajectory.csv and the contact forces in viewer.html's
data). The accuracy table (Markdown, one per scene) gives per case and quantity the reference,
each tool's measured value and its error (measured - reference), and each tool's mean ms per
step; the JSON and CSV rows of these runs have `part` = "accuracy" and the fields
`quantity`, `unit`, `measured`, `reference`, `accuracy_error` and `at_end` (the value at the
end of the run, for quantities that are extremes over it).

Each time is of the simulation loop only: MuJoCo's mj_step loop (Python calls included);
nonsmooth's `wall_time_s` from the summary.json of `nonsmooth simulate` (its run loop; only
the first and last states are recorded). Every nonsmooth run has a wall-clock limit
(`--timeout`, default 300 s) and is reported as "timeout (>T)" past it, T being the limit over
the planned steps in ms (a lower bound); a pile size is skipped for a stepper that timed out
on a smaller pile. `--duration-scale` shortens every scene (the accuracy references follow
the shortened duration).

Run with `bash scripts/compare_mujoco.sh` (it builds the CLI and installs MuJoCo into its own
virtual environment; extra arguments come here). Prints one line per run as it goes, then a
table of milliseconds per step and the ratio to MuJoCo, then the accuracy tables, and writes
every run to target/compare-mujoco.json and target/compare-mujoco.csv (`--out`). Timings
depend on the machine and on whatever else runs on it.
"""

import argparse
import csv
import dataclasses
import datetime
import json
import math
import os
import pathlib
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
import tomllib

import mujoco
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
R, M, GAP = 0.05, 0.1, 0.002
STEPPERS = "drumwright,anitescu-potra,qp-max-dissipation"
SPEED_SCENES = ["stack", "aligned", "incline", "tumble", "quadruped-mjcf", "quadruped-toml",
                "piles"]
ACCURACY_SCENES = ["incline-mu", "box-stop", "tower"]
SCENES = SPEED_SCENES + ACCURACY_SCENES
RECOVERED = ("step_halving", "repeated_solves", "convex_fallbacks")

# The tumbling box: half extents, mass, friction, start height, initial velocity
# (linear, then angular; the box starts unrotated, so body and world axes agree).
BOX = (0.1, 0.05, 0.025)
BOX_MASS, BOX_MU, BOX_Z = 1.0, 0.5, 0.5
BOX_V = (1.0, 0.0, 1.0, 4.0, 8.0, 2.0)

# The accuracy scenes, all at h = ACC_H. The incline's box, feet, gravity and start pose are read
# from examples/drumwright_incline.toml; its friction is set per run.
ACC_H = 0.01
INCLINE_FILE = ROOT / "examples" / "drumwright_incline.toml"
INCLINE_MUS = (0.0, 0.125, 0.25, 0.375, 0.5)
INCLINE_T = 1.0
# A box (half extents, mass) sliding to rest on a level plane, rigid contact: initial speed
# v0 (m/s), friction, direction of travel (degrees from x).
G = 9.81
STOP_BOX, STOP_MASS, STOP_T = (0.1, 0.1, 0.05), 1.0, 2.0
STOP_CASES = ((1.0, 0.5, 0.0), (2.0, 0.3, 0.0), (3.0, 0.2, 0.0), (2.0, 0.3, 45.0))
# Three 0.1 m cubes (1 kg) stacked on a plane, rigid contact, mu = 0.5, at rest for 2 s:
# once on level ground, once with gravity tilted by 10 degrees (tan 10° < mu: it must stick).
TOWER_HALF, TOWER_MU, TOWER_T, TOWER_TILTS = 0.05, 0.5, 2.0, (0.0, 10.0)
CONES = ("pyramidal", "elliptic")


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


class Trace:
    """The path of one run: the position (x, y, z) of each body after every step, the start
    included, and with `forces` the total normal contact force of every step (N)."""

    def __init__(self, bodies, forces=False):
        self.bodies = bodies
        self.forces = forces
        self.pos = []
        self.normal = []

    def read_nonsmooth(self, out):
        """From `nonsmooth simulate`'s trajectory.csv and, with forces, from the contacts in
        viewer.html's data (each recorded state's contact forces: the impulses of the step
        from it over h, world frame)."""
        with (out / "trajectory.csv").open() as f:
            for row in csv.DictReader(f):
                self.pos.append([tuple(float(row[f"q:{b}.{c}"]) for c in "xyz")
                                 for b in self.bodies])
        if self.forces:
            page = (out / "viewer.html").read_text()
            start = page.index(">", page.index('id="nonsmooth-data"')) + 1
            data = json.loads(page[start: page.index("</script>", start)])
            frames = data["runs"][0]["contacts"][:-1]  # no step from the last state
            self.normal = [sum(sum(f * n for f, n in zip(c["force"], c["normal"]))
                               for c in frame if "force" in c) for frame in frames]

    def read_mujoco(self, model, data, step=True):
        """The free bodies' positions (their joints in order) and, after an mj_step (`step`),
        the step's total normal contact force."""
        self.pos.append([tuple(data.qpos[7 * i: 7 * i + 3]) for i in range(len(self.bodies))])
        if step and self.forces:
            f = np.zeros(6)
            total = 0.0
            for i in range(data.ncon):
                mujoco.mj_contactForce(model, data, i, f)
                total += f[0]
            self.normal.append(total)


def mujoco_trace(model, h, duration, trace, qvel=None):
    """Runs MuJoCo again (as mujoco_run, which times it) and fills `trace`."""
    model.opt.timestep = h
    data = mujoco.MjData(model)
    if qvel is not None:
        data.qvel[: len(qvel)] = qvel
    trace.read_mujoco(model, data, step=False)
    for _ in range(int(round(duration / h))):
        mujoco.mj_step(model, data)
        trace.read_mujoco(model, data)


def nonsmooth_run(binary, path, stepper, h, duration, timeout, trace=None):
    """Runs `nonsmooth simulate` and reads its summary.json (also written on a failed step);
    with a `Trace`, records every step and fills it from the run's files."""
    steps = int(round(duration / h))
    record_every = 1 if trace is not None else max(steps, 1)
    with tempfile.TemporaryDirectory() as out:
        cmd = [binary, "simulate", str(path), "--stepper", stepper, "--dt", repr(h),
               "--duration", repr(duration), "--record-every", str(record_every),
               "--quiet", "--out", out]
        if trace is not None and trace.forces:
            cmd.append("--html")
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
        if trace is not None and run.returncode == 0:
            trace.read_nonsmooth(pathlib.Path(out))
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


# The accuracy scenes: each case is one run, the same for every tool, with the quantities it
# measures and their references computed from the scene's parameters.


@dataclasses.dataclass
class Case:
    scene: str
    label: str
    h: float
    duration: float
    toml: pathlib.Path
    mjcf: object  # cone -> MJCF text
    bodies: list
    references: list  # (quantity, unit, reference)
    measure: object  # Trace -> (measured, value at the end) in the order of `references`
    qvel: tuple = None
    forces: bool = False


def steps_of(duration, h, scale):
    """The scaled duration as a whole number of steps."""
    return round(max(1, round(duration * scale / h)) * h, 9)


def boxes_toml(name, boxes, mu, gravity, velocity=None):
    """Unrotated rigid boxes (name, half extents, mass, centre) on a level plane, one friction
    coefficient for every pair; `velocity` the first box's initial (linear, angular)."""
    out = [
        f'[model]\nname = "{name}"\ndimension = "spatial"\n'
        f"gravity = [{', '.join(repr(g) for g in gravity)}]\ncontact_margin = 1e-3\n\n"
        f'[[materials]]\nname = "box"\nfriction = {mu!r}\n\n'
        '[[colliders]]\nname = "ground"\nshape = { plane = [0.0, 0.0, 1.0] }\n'
        'material = "box"\n\n'
    ]
    for b, half, mass, _ in boxes:
        size = ", ".join(repr(e) for e in half)
        out.append(
            f'[[bodies]]\nname = "{b}"\nmass = {mass!r}\ninertia = {{ solid_box = [{size}] }}\n\n'
            f'[[colliders]]\nname = "{b}_shape"\nbody = "{b}"\nshape = {{ box = [{size}] }}\n'
            'material = "box"\n\n'
        )
    out.append("[initial]\n")
    for b, _, _, (x, y, z) in boxes:
        out.append(f"q.{b} = [{x!r}, {y!r}, {z!r}, 1.0, 0.0, 0.0, 0.0]\n")
    if velocity is not None:
        out.append(f"v.{boxes[0][0]} = [{', '.join(repr(v) for v in velocity)}]\n")
    return "".join(out)


def boxes_mjcf(boxes, mu, gravity, h, cone):
    """The same boxes for MuJoCo (default soft contact, condim 3) with the given cone."""
    fr = f'friction="{mu!r} 0.005 0.0001"'
    bodies = "".join(
        f'<body pos="{x!r} {y!r} {z!r}"><freejoint/><geom type="box" '
        f'size="{" ".join(repr(e) for e in half)}" mass="{mass!r}" {fr}/></body>'
        for _, half, mass, (x, y, z) in boxes
    )
    return (
        f'<mujoco><option timestep="{h}" cone="{cone}" '
        f'gravity="{" ".join(repr(g) for g in gravity)}"/><worldbody>'
        f'<geom type="plane" size="0 0 0.1" {fr}/>{bodies}</worldbody></mujoco>'
    )


def incline_setup():
    """The incline of examples/drumwright_incline.toml: its text and the parameters the
    closed form and the MuJoCo model need."""
    src = INCLINE_FILE.read_text()
    doc = tomllib.loads(src)
    box = doc["bodies"][0]
    return src, {
        "gravity": doc["model"]["gravity"],
        "body": box["name"],
        "mass": box["mass"],
        "half": box["inertia"]["solid_box"],
        "feet": [(c["pose"]["xyz"], c["shape"]["sphere"])
                 for c in doc["colliders"] if c.get("body") == box["name"]],
        "q0": doc["initial"]["q"][box["name"]],
    }


def extreme(values):
    """The value farthest from zero, with its sign."""
    return max(values, key=abs)


def slope_of(gravity):
    """|g| and the slope angle that gravity tilted away from the plane normal (z) makes."""
    gx, gy, gz = gravity
    return math.sqrt(gx * gx + gy * gy + gz * gz), math.atan2(math.hypot(gx, gy), -gz)


def incline_slide(gravity, mu, t):
    """Closed form: a block released at rest slides ½ a t², a = |g| (sin θ − μ cos θ)₊."""
    g, theta = slope_of(gravity)
    a = max(0.0, g * (math.sin(theta) - mu * math.cos(theta)))
    return 0.5 * a * t * t


def incline_mu_mjcf(p, mu, h, cone):
    """The box on four spheres of the incline for MuJoCo: its default soft contact (a
    Hertz law has no MuJoCo counterpart), friction mu on feet and plane."""
    fr = f'friction="{mu!r} 0.005 0.0001"'
    x, y, z, qw, qx, qy, qz = p["q0"]
    feet = "".join(
        f'<geom type="sphere" size="{r!r}" pos="{fx!r} {fy!r} {fz!r}" mass="0" {fr}/>'
        for (fx, fy, fz), r in p["feet"]
    )
    return (
        f'<mujoco><option timestep="{h}" cone="{cone}" '
        f'gravity="{" ".join(repr(g) for g in p["gravity"])}"/><worldbody>'
        f'<geom type="plane" size="10 10 0.1" {fr}/>'
        f'<body pos="{x!r} {y!r} {z!r}" quat="{qw!r} {qx!r} {qy!r} {qz!r}"><freejoint/>'
        f'<geom type="box" size="{" ".join(repr(e) for e in p["half"])}" mass="{p["mass"]!r}" '
        f'contype="0" conaffinity="0"/>{feet}</body></worldbody></mujoco>'
    )


def incline_mu_cases(args, write):
    """The incline box released at rest for each μ: the slide along the slope, the largest
    deviation of the step's total normal force from the load the feet carry at rest
    (m |g| cos θ), the largest drift normal to the plane."""
    src, p = incline_setup()
    gx, gy, gz = p["gravity"]
    down = (gx / math.hypot(gx, gy), gy / math.hypot(gx, gy))
    load = p["mass"] * -gz
    duration = steps_of(INCLINE_T, ACC_H, args.duration_scale)

    def measure(trace):
        path = [state[0] for state in trace.pos]
        (x0, y0, z0), (x, y, z) = path[0], path[-1]
        slide = (x - x0) * down[0] + (y - y0) * down[1]
        normal = max(trace.normal, key=lambda f: abs(f - load))
        drift = extreme(z - z0 for _, _, z in path)
        return [(slide, slide), (normal, trace.normal[-1]), (drift * 1e3, (z - z0) * 1e3)]

    cases = []
    for mu in INCLINE_MUS:
        text = re.sub(r"(?m)^friction = .*$", f"friction = {mu!r}", src)
        cases.append(Case(
            "incline-mu", f"μ = {mu:g}", ACC_H, duration,
            write(f"incline_mu{mu:g}.toml", text),
            lambda cone, mu=mu: incline_mu_mjcf(p, mu, ACC_H, cone), [p["body"]],
            [("slide", "m", incline_slide(p["gravity"], mu, duration)),
             ("normal force, worst step", "N", load), ("normal drift, extreme", "mm", 0.0)],
            measure, forces=True))
    return cases


def box_stop_distance(v0, mu, t):
    """Closed form: v0 t − ½ μ g t² until the box stops at t = v0/(μ g), then v0²/(2 μ g)."""
    a = mu * G
    return v0 * t - 0.5 * a * t * t if t < v0 / a else v0 * v0 / (2 * a)


def box_stop_cases(args, write):
    """A box launched along the plane at v0 (x or a diagonal), distance travelled."""
    duration = steps_of(STOP_T, ACC_H, args.duration_scale)
    boxes = [("box", STOP_BOX, STOP_MASS, (0.0, 0.0, STOP_BOX[2]))]

    def measure(trace):
        (x0, y0, _), (x, y, _) = trace.pos[0][0], trace.pos[-1][0]
        distance = math.hypot(x - x0, y - y0)
        return [(distance, distance)]

    cases = []
    for v0, mu, angle in STOP_CASES:
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        v = (v0 * c, v0 * s, 0.0, 0.0, 0.0, 0.0)
        gravity = (0.0, 0.0, -G)
        name = f"box_stop_v{v0:g}_mu{mu:g}_a{angle:g}.toml"
        cases.append(Case(
            "box-stop", f"v0 = {v0:g} m/s at {angle:g}°, μ = {mu:g}", ACC_H, duration,
            write(name, boxes_toml("box_stop", boxes, mu, gravity, v)),
            lambda cone, mu=mu, g=gravity: boxes_mjcf(boxes, mu, g, ACC_H, cone), ["box"],
            [("stopping distance", "m", box_stop_distance(v0, mu, duration))], measure, v))
    return cases


def tower_cases(args, write):
    """Three cubes at rest on each other, on level ground and with gravity tilted: each box's
    largest horizontal (in the plane) and vertical (signed, along the normal) drift."""
    duration = steps_of(TOWER_T, ACC_H, args.duration_scale)
    e = TOWER_HALF
    boxes = [(f"b{i}", (e, e, e), 1.0, (0.0, 0.0, (2 * i + 1) * e)) for i in range(3)]
    names = [b[0] for b in boxes]

    def measure(trace):
        out = []
        for i in range(len(names)):
            path = [state[i] for state in trace.pos]
            (x0, y0, z0), (x, y, z) = path[0], path[-1]
            horizontal = max(math.hypot(px - x0, py - y0) for px, py, _ in path)
            vertical = extreme(pz - z0 for _, _, pz in path)
            out.append((horizontal * 1e3, math.hypot(x - x0, y - y0) * 1e3))
            out.append((vertical * 1e3, (z - z0) * 1e3))
        return out

    drifts = ("horizontal drift, max", "vertical drift, extreme")
    refs = [(f"box {i + 1} {d}", "mm", 0.0) for i in range(len(names)) for d in drifts]
    cases = []
    for tilt in TOWER_TILTS:
        t = math.radians(tilt)
        gravity = (-G * math.sin(t), 0.0, -G * math.cos(t))
        cases.append(Case(
            "tower", f"tilt {tilt:g}°", ACC_H, duration,
            write(f"tower_tilt{tilt:g}.toml", boxes_toml("tower", boxes, TOWER_MU, gravity)),
            lambda cone, g=gravity: boxes_mjcf(boxes, TOWER_MU, g, ACC_H, cone), names,
            refs, measure))
    return cases


ACCURACY_CASES = {
    "incline-mu": incline_mu_cases, "box-stop": box_stop_cases, "tower": tower_cases,
}
ACCURACY_TITLES = {
    "incline-mu": "box on four spherical Hertz feet released on the 15° incline of "
                  "examples/drumwright_incline.toml",
    "box-stop": "box (0.2 × 0.2 × 0.1 m, 1 kg) sliding to rest on a plane, rigid contact",
    "tower": "three 0.1 m cubes (1 kg, μ = 0.5) stacked at rest, rigid contact",
}
ACCURACY_NOTES = [
    "reference: incline slide ½ a t², a = |g| (sin θ − μ cos θ)₊ (|g|, θ from the model's "
    "gravity); normal force m |g| cos θ, what the feet carry at rest; stopping distance "
    "v0 t − ½ μ g t² up to t = v0/(μ g), v0²/(2 μ g) after; drifts 0 (limit of interest "
    "0.5 mm)",
    "error (in brackets): measured − reference; where the reference is 0 the value is the "
    "error; normal force, worst step: the step whose total normal force is farthest from the "
    "reference; extreme: the signed value farthest from 0 over the run; max: the largest "
    "(at_end in the JSON and CSV: the value at the end of the run)",
    "contact: the incline's feet are Hertz springs for drumwright; anitescu-potra and "
    "qp-max-dissipation make every contact rigid; MuJoCo has no Hertz law and no rigid "
    "contact, so every scene uses its default soft contact (solref 0.02 1, solimp 0.9 0.95 "
    "0.001)",
    "MuJoCo pyramidal is its default cone; elliptic sets <option cone=\"elliptic\"/>",
    "ms per step: the mean over the scene's runs, each timed in a run that records only "
    "the first and last states (MuJoCo: the mj_step loop)",
]


def measured_rows(base, res, case, trace):
    """One row per quantity of `case`: the run's timing and status with what it measured."""
    values = case.measure(trace) if trace is not None and trace.pos else None
    rows = []
    for i, (quantity, unit, ref) in enumerate(case.references):
        row = {**base, **res, "quantity": quantity, "unit": unit, "reference": ref,
               "measured": None, "accuracy_error": None, "at_end": None}
        if values is not None:
            row["measured"], row["at_end"] = values[i]
            row["accuracy_error"] = row["measured"] - ref
        rows.append(row)
    return rows


def accuracy_runs(args, steppers, tmp):
    """Every case of the chosen accuracy scenes with MuJoCo's two cones and every stepper."""
    tmp = pathlib.Path(tmp)

    def write(name, text):
        (tmp / name).write_text(text)
        return tmp / name

    rows = []
    for scene in (s for s in ACCURACY_SCENES if s in args.scenes):
        for case in ACCURACY_CASES[scene](args, write):
            base = {"part": "accuracy", "scene": scene, "label": case.label,
                    "n": len(case.bodies), "h": case.h, "duration": case.duration}
            print(f"{scene} {case.label}:", flush=True)
            runs = []
            for cone in CONES:
                model = mujoco.MjModel.from_xml_string(case.mjcf(cone))
                res = mujoco_run(model, case.h, case.duration, case.qvel)
                trace = Trace(case.bodies, case.forces)
                mujoco_trace(model, case.h, case.duration, trace, case.qvel)
                tool = {"tool": "mujoco", "stepper": f"mujoco-{cone}", "cone": cone}
                runs.append(measured_rows({**base, **tool}, res, case, trace))
            for st in steppers:
                res = nonsmooth_run(args.binary, case.toml, st, case.h, case.duration,
                                    args.timeout)
                trace = None
                if res["status"] == "ok":
                    trace = Trace(case.bodies, case.forces)
                    nonsmooth_run(args.binary, case.toml, st, case.h, case.duration,
                                  args.timeout, trace)
                tool = {"tool": "nonsmooth", "stepper": st}
                runs.append(measured_rows({**base, **tool}, res, case, trace))
            for run in runs:
                line = f"  {run[0]['stepper']}: "
                if run[0]["measured"] is None:
                    line += f"{value_text(run[0])}; {run[0].get('error', '')}"
                else:
                    line += f"{cell(run[0], None)} ms per step; " + "; ".join(
                        f"{r['quantity']} {value_text(r)}" for r in run)
                print(line, flush=True)
                rows += run
    return rows


def number(x, sign=False):
    """Four decimals, two significant digits below 1e-3, 0 below 1e-9; a minus sign."""
    if abs(x) < 1e-9:
        return "0"
    text = f"{abs(x):.4f}" if abs(x) >= 1e-3 else f"{abs(x):.1e}"
    return ("−" if x < 0 else "+" if sign else "") + text


def value_text(row):
    """The measured value and its error (the value itself where the reference is 0), or what
    stopped the run."""
    if row["measured"] is None:
        if row["status"] == "timeout":
            return f"timeout (>{row['ms_per_step_min']:.3g} ms per step)"
        return row["status"] if row["status"] != "ok" else "no result"
    if row["reference"] == 0:
        return number(row["measured"])
    return f"{number(row['measured'])} ({number(row['accuracy_error'], sign=True)})"


def print_accuracy(rows, tools):
    """Per scene, a Markdown table: one line per case and quantity, the reference and each
    tool's measured value (its error), then the mean ms per step of each tool."""
    names = [t.replace("mujoco-", "MuJoCo ") for t in tools]
    print("\nwhat each tool's speed costs in accuracy: measured (error = measured − reference)")
    for scene in dict.fromkeys(r["scene"] for r in rows):
        mine = [r for r in rows if r["scene"] == scene]
        print(f"\n{scene}: {ACCURACY_TITLES[scene]}, h = {mine[0]['h'] * 1e3:g} ms, "
              f"{mine[0]['duration']:g} s\n")
        print("| case | quantity | reference | " + " | ".join(names) + " |")
        print("|---|---|---:|" + "---:|" * len(tools))
        for label in dict.fromkeys(r["label"] for r in mine):
            for q in dict.fromkeys(r["quantity"] for r in mine if r["label"] == label):
                sel = {r["stepper"]: r for r in mine if r["label"] == label
                       and r["quantity"] == q}
                first = next(iter(sel.values()))
                line = (f"| {label} | {q} [{first['unit']}] | {number(first['reference'])} | "
                        + " | ".join(value_text(sel[t]) if t in sel else "–" for t in tools))
                print(line + " |")
        times = []
        for t in tools:
            runs = [r for r in mine if r["stepper"] == t and r["quantity"] == mine[0]["quantity"]]
            ms = [r["ms_per_step"] for r in runs if r["ms_per_step"]]
            text = f"{sum(ms) / len(ms):.3f}" if ms else "–"
            if len(ms) < len(runs):
                text += f" ({len(runs) - len(ms)} of {len(runs)} runs failed or timed out)"
            times.append(text)
        print("| ms per step (mean) | | | " + " | ".join(times) + " |")
    print()
    for note in ACCURACY_NOTES:
        print(f"- {note}")


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


def print_speed(rows, steppers):
    """The speed table: one line per scene, ms per step (ratio to MuJoCo)."""
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
            base = {"part": "speed", "scene": key, "label": label, "n": n, "h": h,
                    "duration": duration}
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
        accuracy = accuracy_runs(args, steppers, tmp)

    if rows:
        print_speed(rows, steppers)

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

    if accuracy:
        print_accuracy(accuracy, [f"mujoco-{c}" for c in CONES] + steppers)

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
        json.dumps({"meta": meta, "runs": rows + accuracy, "pile_exponents": exponents,
                    "accuracy_notes": ACCURACY_NOTES if accuracy else []}, indent=1) + "\n")
    fields = ["scene", "label", "n", "h", "duration", "tool", "stepper", "status",
              "ms_per_step", "ms_per_step_min", "ratio", "steps", "unconverged_steps",
              *RECOVERED, "substeps", "final_t", "error", "part", "cone", "quantity", "unit",
              "measured", "reference", "accuracy_error", "at_end"]
    with out.with_suffix(".csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows + accuracy:
            w.writerow({**r, **(r.get("recoveries") or {})})
    print(f"\nwrote {out.with_suffix('.json')} and {out.with_suffix('.csv')}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
