"""nonsmooth.view: the offline viewer page of a simulated trajectory, inline in Jupyter."""

import numpy as np
import pytest

import nonsmooth as ns


def test_a_simulated_trajectory_shows_as_an_inline_player(examples, tmp_path):
    model = ns.load_model(str(examples / "sliding_box.toml"))
    traj = ns.simulate(model, stepper="anitescu-potra", dt=1e-3, duration=0.2)
    player = ns.view(model, traj, title="box")
    page = player.page
    assert page.startswith("<!DOCTYPE html>") or "<html" in page[:200]
    assert "nonsmoothViewer" in page and "box" in page
    inline = player._repr_html_()
    assert inline.startswith("<iframe srcdoc=") and "&lt;" in inline
    player.save(tmp_path / "box.html")
    assert (tmp_path / "box.html").read_text(encoding="utf-8") == page


def test_mismatched_arrays_are_a_value_error(examples):
    model = ns.load_model(str(examples / "sliding_box.toml"))
    traj = ns.simulate(model, stepper="anitescu-potra", dt=1e-3, duration=0.05)
    with pytest.raises(ValueError, match="columns"):
        ns.view(model, {"t": traj["t"], "q": traj["q"][:, :2], "v": traj["v"]})
    with pytest.raises(ValueError, match="rows"):
        ns.view(model, {"t": traj["t"][:-1], "q": traj["q"], "v": traj["v"]})
    assert np.all(np.isfinite(traj["q"]))


def test_an_optimal_control_result_shows_its_motion(examples):
    # The particle of the time-freezing paper's Ex. 5 on its model file: the optimal motion in physical time.
    model = ns.load_model(str(examples / "particle.toml"))
    sol = ns.solve_ocp(path=str(examples / "ocp_particle.toml"))
    page = ns.view(model, sol, title="particle OCP").page
    assert "nonsmoothViewer" in page and "particle OCP" in page and "optimal control" in page
