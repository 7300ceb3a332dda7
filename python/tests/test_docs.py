"""The Python code blocks of README.md and docs/*.md run as a user runs them: each block saved
to a file and executed by ``python`` in a fresh process, from a scratch folder holding a link
to ``examples/``. The process must exit with status 0, and what the doc says the block gives
is checked (``EXPECTED``). A block preceded by ``<!-- doc-test: skip (reason) -->`` is
skipped with that reason (``pytest -rs`` prints it). The shell blocks are run by
``crates/nonsmooth-cli/tests/doc_commands.rs``."""

import re
import subprocess
import sys

import pytest

import nonsmooth as ns
from conftest import ROOT

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", flags=re.S | re.M)
SKIP = re.compile(r"^<!--\s*doc-test:\s*skip\s*\((.+)\)\s*-->\s*$")
TIMEOUT_S = 600


def doc_paths():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def python_blocks():
    """(where, code, skip reason or None) of every ``python``/``py`` block."""
    found = []
    for path in doc_paths():
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            lang = re.split(r"[,\s]", m.group(1).strip())[0]
            if lang not in ("python", "py"):
                continue
            line = text.count("\n", 0, m.start()) + 1
            before = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
            skip = SKIP.match(before[-1].strip()) if before else None
            where = f"{path.relative_to(ROOT)}:{line}"
            found.append((where, m.group(2), skip.group(1) if skip else None))
    return found


BLOCKS = python_blocks()


# What the docs say their blocks give: (doc, a line of the block, check(stdout, folder)).


def _features(out, _dir):
    assert f"features: {ns.FEATURES}" in out


def _first_script(out, dir_):
    # "holding torque: [4.70...]" — m g l sin(0.5) ≈ 4.70 N·m, as the comment says.
    torque = float(re.search(r"holding torque: \[\s*([-\d.e+]+)", out).group(1))
    assert abs(torque - 4.70) < 0.01, torque
    # "move a falling particle to (3, 0) at rest at T = 2": reached.
    error = float(re.search(r"terminal error ([-\d.e+]+)", out).group(1))
    assert error < 1e-6, error
    assert "ModelError:" in out
    _plot_if_matplotlib(dir_, "ball.png")


def _sweep(out, _dir):
    # One line per case of the 2 × 2 grid, none failed.
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    assert len(lines) == 4, out
    assert not any("error:" in ln for ln in lines), out


def _getting_started(out, dir_):
    # The apex after the first bounce is e² = 0.64 of the drop above the resting height: the
    # ball's centre starts at 1.0 m, its radius is 0.1 m (examples/bouncing_sphere.toml).
    apex = float(re.search(r"apex after the first bounce: ([\d.]+) m", out).group(1))
    assert abs(apex - (0.1 + 0.64 * 0.9)) < 0.02, apex
    if _has_matplotlib():
        assert "wrote ball.png" in out and (dir_ / "ball.png").is_file()
    else:
        assert "install matplotlib to plot" in out


def _impact(out, dir_):
    # "(never penetrating)": no outcome has a negative normal velocity.
    vmin = float(re.search(r"min normal velocity ([-\d.e+]+)", out).group(1))
    assert vmin >= -1e-9, vmin
    _plot_if_matplotlib(dir_, "impact_set.png")


def _inverse(out, _dir):
    # "Standing still, the total normal force equals the robot's weight for every variant."
    robot = ns.load_model(str(ROOT / "examples" / "id_quadruped.toml"))
    weight = robot.mass_matrix(robot.q0)[0, 0] * 9.81
    totals = [float(x) for x in re.findall(r"total normal force\s+([-\d.]+) N", out)]
    assert len(totals) == 5, out
    for total in totals:
        assert abs(total - weight) < 1e-3 * weight, (totals, weight)


def _ocp(out, _dir):
    # The particle problem's optimum (docs/optimal-control.md, "Starting from a rollout").
    objective, terminal_error, _ = (float(x) for x in out.split())
    assert abs(objective - 13.507316) < 1e-5, objective
    assert terminal_error < 1e-6, terminal_error


def _stability_model(out, _dir):
    assert out.split()[0] == "certified", out


EXPECTED = [
    ("docs/python.md", 'print("features:", ns.FEATURES)', _features),
    ("docs/python.md", 'print("holding torque:", hold["torques"])', _first_script),
    ("docs/python.md", "max_workers=2, progress=False)", _sweep),
    ("docs/getting-started.md", "apex after the first bounce", _getting_started),
    ("docs/impact.md", "never penetrating", _impact),
    ("docs/inverse-dynamics.md", "total normal force", _inverse),
    ("docs/optimal-control.md", 'sol = ns.solve_ocp(path="examples/ocp_particle.toml")', _ocp),
    ("docs/stability.md", 'ns.load_model("examples/stability_box_on_slope.toml")',
     _stability_model),
]


def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _plot_if_matplotlib(dir_, name):
    if _has_matplotlib():
        assert (dir_ / name).is_file(), f"{name} not written"


def _expected(where, code):
    doc = where.rsplit(":", 1)[0]
    return [check for d, line, check in EXPECTED if d == doc and line in code]


def test_every_expectation_names_one_block():
    for doc, line, _ in EXPECTED:
        matches = [w for w, code, _ in BLOCKS if w.startswith(doc + ":") and line in code]
        assert len(matches) == 1, f"{doc}: `{line}` is in {len(matches)} blocks: {matches}"


@pytest.mark.parametrize("where,code,skip", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_doc_python_block_runs_as_a_script(where, code, skip, tmp_path):
    if skip:
        pytest.skip(f"{where}: {skip}")
    # The blocks use paths relative to the repository root and may write files there.
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert proc.returncode == 0, (
        f"{where} exited with status {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-3000:]}"
    )
    for check in _expected(where, code):
        check(proc.stdout, tmp_path)

