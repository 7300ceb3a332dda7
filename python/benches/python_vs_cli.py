"""Time per step of ``examples/quadruped.toml`` (18 DOF, four point feet on rigid ground)
through the Python module and through the ``nonsmooth`` command-line binary, in one run: the
same model, step size, duration and stepper (the model's default unless ``--stepper``).

    python python/benches/python_vs_cli.py [--cli target/release/nonsmooth] [--repeats 5]

Python: the wall time of ``nonsmooth.simulate(model, dt, duration)`` (the run loop plus the
conversion of the trajectory to numpy arrays). CLI: ``wall_time_s`` of the run's
``summary.json`` (the run loop alone; loading the model and writing the files excluded). Each
is the best of ``--repeats`` runs. Exit status 1 when Python takes more than ``--max-ratio``
(2) times the CLI's time per step: the module is then not built as the release binary is.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import nonsmooth as ns

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "quadruped.toml"


def python_ms_per_step(model, dt, duration, stepper, repeats):
    best, name = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        traj = ns.simulate(model, stepper=stepper, dt=dt, duration=duration)
        wall = time.perf_counter() - start
        best = min(best, wall * 1e3 / traj["steps"])
        name = traj["stepper"]
    return best, name


def cli_ms_per_step(cli, dt, duration, stepper, repeats):
    best, name = float("inf"), None
    with tempfile.TemporaryDirectory() as out:
        cmd = [str(cli), "simulate", str(MODEL), "--dt", str(dt), "--duration", str(duration),
               "--quiet", "--out", out]
        if stepper:
            cmd += ["--stepper", stepper]
        for _ in range(repeats):
            subprocess.run(cmd, check=True)
            summary = json.loads((pathlib.Path(out) / "summary.json").read_text())
            best = min(best, summary["wall_time_s"] * 1e3 / summary["steps"])
            name = summary["stepper"]
    return best, name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", type=pathlib.Path, default=ROOT / "target" / "release" / "nonsmooth",
                        help="the nonsmooth binary (default: the release build)")
    parser.add_argument("--stepper", default=None, help="default: the one the model calls for")
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument("--duration", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--max-ratio", type=float, default=2.0)
    args = parser.parse_args()
    if not args.cli.is_file():
        sys.exit(f"{args.cli}: no such binary (cargo build --release -p nonsmooth-cli, or --cli)")
    model = ns.load_model(str(MODEL))
    py, py_stepper = python_ms_per_step(model, args.dt, args.duration, args.stepper, args.repeats)
    cli, cli_stepper = cli_ms_per_step(args.cli, args.dt, args.duration, args.stepper,
                                       args.repeats)
    if py_stepper != cli_stepper:
        sys.exit(f"the two ran different steppers: Python {py_stepper}, CLI {cli_stepper}")
    steps = round(args.duration / args.dt)
    ratio = py / cli
    print(f"{MODEL.name}, {py_stepper}, {steps} steps of {args.dt:g} s (best of {args.repeats})")
    print(f"Python {py:.4f} ms/step, CLI {cli:.4f} ms/step ({args.cli}), "
          f"Python/CLI {ratio:.2f} (at most {args.max_ratio:g})")
    if ratio > args.max_ratio:
        sys.exit(1)


if __name__ == "__main__":
    main()
