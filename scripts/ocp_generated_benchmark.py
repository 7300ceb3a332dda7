"""Generated contact-rich optimal-control problems (``nonsmooth ocp-generate``: planar boxes,
sleds and crates pushed to rest, reachable and unreachable by construction) solved by
``nonsmooth ocp``, each under a wall-time limit. Prints, per problem, what it is by
construction, the run's outcome, complementarity, terminal error and time, then the rates
the acceptance reads (reachable problems solved exactly: complementarity <= 1e-9 and
terminal error <= 1e-6 within the limit; unreachable ones named unreachable within their
limit; reachable ones called unreachable) beside the CPU model; writes results.csv and
results.json into --out.

    python3 scripts/ocp_generated_benchmark.py --seed 1 --reachable 20 --unreachable 10
"""
import argparse
import csv
import json
import pathlib
import platform
import subprocess
import sys
import time


def cpu_model():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nonsmooth", default="target/release/nonsmooth", help="the CLI binary")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reachable", type=int, default=20)
    parser.add_argument("--unreachable", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=120.0, help="wall seconds per reachable problem")
    parser.add_argument("--unreachable-timeout", type=float, default=60.0, help="wall seconds per unreachable problem")
    parser.add_argument("--out", default="out/ocp-generated-benchmark")
    parser.add_argument("--formulation", choices=["default", "time-freezing", "fesd-j"], default="default",
                        help="set [ocp] formulation in every generated problem (default: the model's, FESD-J for these several-contact bodies)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    problems_dir = out / "problems"
    subprocess.run([args.nonsmooth, "ocp-generate", "--seed", str(args.seed), "--reachable",
                    str(args.reachable), "--unreachable", str(args.unreachable), "--out",
                    str(problems_dir)], check=True)
    manifest = json.loads((problems_dir / "manifest.json").read_text())
    if args.formulation != "default":
        for p in manifest["problems"]:
            path = problems_dir / p["problem"]
            text = path.read_text().replace("[ocp]\n", f'[ocp]\nformulation = "{args.formulation}"\n', 1)
            path.write_text(text)
    cpu = cpu_model()
    print(f"CPU: {cpu}; seed {args.seed}; {len(manifest['problems'])} problems; formulation {args.formulation}")
    header = f"{'problem':<14} {'expected':<12} {'outcome':<12} {'complementarity':>15} {'terminal err':>12} {'time s':>8}  verdict"
    print(header)
    rows = []
    for p in manifest["problems"]:
        limit = args.timeout if p["expected"] == "reachable" else args.unreachable_timeout
        run_dir = out / "runs" / p["name"]
        start = time.perf_counter()
        try:
            subprocess.run([args.nonsmooth, "ocp", str(problems_dir / p["problem"]), "--out", str(run_dir), "--quiet"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        wall = time.perf_counter() - start
        summary_path = run_dir / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() and not timed_out else {}
        outcome = "timeout" if timed_out else summary.get("outcome", "error")
        comp = summary.get("comp_residual", float("nan"))
        terr = summary.get("terminal_error", float("nan"))
        exact = outcome == "solved" and comp <= 1e-9 and terr <= 1e-6
        # FESD-J says when the effort of an exact solution was not minimized
        not_minimized = "effort not minimized" in summary.get("detail", "")
        if p["expected"] == "reachable":
            verdict = ("exact, effort not minimized" if not_minimized else "exact") if exact else (
                "called unreachable" if outcome == "unreachable" else "not solved")
        else:
            verdict = "named unreachable" if outcome == "unreachable" else "not named"
        row = {"name": p["name"], "family": p["family"], "expected": p["expected"], "outcome": outcome,
               "comp_residual": comp, "terminal_error": terr, "objective": summary.get("objective", float("nan")),
               "wall_seconds": round(wall, 2), "verdict": verdict,
               "mass": p["mass"], "mu": p["mu"], "force_limit": p["force_limit"], "drop_height": p["drop_height"]}
        rows.append(row)
        print(f"{p['name']:<14} {p['expected']:<12} {outcome:<12} {comp:>15.3e} {terr:>12.3e} {wall:>8.1f}  {verdict}", flush=True)
    reach = [r for r in rows if r["expected"] == "reachable"]
    unreach = [r for r in rows if r["expected"] == "unreachable"]
    exact = sum(r["verdict"].startswith("exact") for r in reach)
    not_minimized = sum(r["verdict"] == "exact, effort not minimized" for r in reach)
    named = sum(r["verdict"] == "named unreachable" for r in unreach)
    wrong = sum(r["verdict"] == "called unreachable" for r in reach)
    print(f"CPU {cpu}: reachable exact {exact}/{len(reach)} (within {args.timeout:.0f} s; "
          f"{not_minimized} of them with the effort not minimized), "
          f"unreachable named {named}/{len(unreach)} (within {args.unreachable_timeout:.0f} s), "
          f"reachable called unreachable {wrong}")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    (out / "results.json").write_text(json.dumps({"cpu": cpu, "seed": args.seed, "formulation": args.formulation, "reachable_exact": exact, "reachable_exact_effort_not_minimized": not_minimized,
                                                  "reachable": len(reach), "unreachable_named": named,
                                                  "unreachable": len(unreach), "reachable_called_unreachable": wrong,
                                                  "problems": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
