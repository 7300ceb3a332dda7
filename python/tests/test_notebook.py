"""The tour notebook in examples/python runs top to bottom: its code cells in order, in one
namespace, from the repository root (as `jupyter nbconvert --execute` would)."""

import json
import os

from conftest import ROOT


def test_the_tour_notebook_runs_top_to_bottom(capsys):
    notebook = json.loads((ROOT / "examples" / "python" / "tour.ipynb").read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert cells, "the notebook has no code cell"
    namespace = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for k, cell in enumerate(cells):
            source = "".join(cell["source"])
            exec(compile(source, f"tour.ipynb cell {k}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "angle after 3 s" in out and "height at 1 s" in out
