"""The offline trajectory viewer in Python: ``nonsmooth.view(model, trajectory)`` gives a
:class:`Player` that Jupyter shows inline (``_repr_html_``) and that saves as one offline
HTML file — the page ``nonsmooth simulate --html`` writes.

::

    traj = ns.simulate(model, stepper="drumwright", duration=2.0)
    ns.view(model, traj)                 # in a notebook: the player, inline
    ns.view(model, traj).save("ball.html")

    sol = ns.solve_ocp(path="examples/ocp_ball_brake.toml")   # a problem on a model file
    ns.view(ns.load_model("examples/ball_on_ground.toml"), sol)   # the optimal motion
"""

from __future__ import annotations

import html
import os
from typing import Any, Mapping, Optional, Union

from ._nonsmooth import Model, viewer_html

__all__ = ["Player", "view"]


class Player:
    """A trajectory viewer page (self-contained HTML, works offline)."""

    def __init__(self, page: str) -> None:
        self.page = page
        """The page's HTML."""

    def _repr_html_(self) -> str:
        # In an iframe, so that the page's script runs in the notebook's output cell.
        return (
            f'<iframe srcdoc="{html.escape(self.page, quote=True)}" '
            'style="width:100%;height:600px;border:1px solid #ddd"></iframe>'
        )

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the page to ``path`` (open it in any browser, offline)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.page)


def _ocp_motion(result: Mapping[str, Any]) -> Mapping[str, Any]:
    """The stage points of a ``solve_ocp`` result as a trajectory in physical time (y = (q, v,
    t) with q̇ = v: n_q = n_v; frozen impact phases collapse to their end)."""
    import numpy as np

    y = np.asarray(result["y"], dtype=float)
    nq = (y.shape[1] - 1) // 2
    keep = [0]
    for i in range(1, y.shape[0]):
        if y[i, -1] > y[keep[-1], -1] + 1e-12:
            keep.append(i)
    y = y[keep]
    return {"t": y[:, -1], "q": y[:, :nq], "v": y[:, nq : 2 * nq], "stepper": "optimal control"}


def view(model: Model, trajectory: Mapping[str, Any], title: Optional[str] = None) -> Player:
    """The viewer of ``trajectory`` of ``model``: a ``simulate`` result (``t``, ``q``, ``v``,
    ``stepper``) or a ``solve_ocp`` result of a problem on that model (its stage points in
    physical time). Bodies drawn from their collider shapes, contact points, play/pause/scrub
    and the time series of the coordinates."""
    if "y" in trajectory and "q" not in trajectory:
        trajectory = _ocp_motion(trajectory)
    return Player(
        viewer_html(
            model,
            trajectory["t"],
            trajectory["q"],
            trajectory["v"],
            trajectory.get("stepper", "trajectory"),
            title,
        )
    )
