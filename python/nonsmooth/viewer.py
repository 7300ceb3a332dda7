"""The offline trajectory viewer in Python: ``nonsmooth.view(model, trajectory)`` gives a
:class:`Player` that Jupyter shows inline (``_repr_html_``) and that saves as one offline
HTML file — the page ``nonsmooth simulate --html`` writes.

::

    traj = ns.simulate(model, stepper="drumwright", duration=2.0)
    ns.view(model, traj)                 # in a notebook: the player, inline
    ns.view(model, traj).save("ball.html")
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


def view(model: Model, trajectory: Mapping[str, Any], title: Optional[str] = None) -> Player:
    """The viewer of ``trajectory`` (a ``simulate`` result: ``t``, ``q``, ``v``, ``stepper``)
    of ``model``: bodies drawn from their collider shapes, contact points, play/pause/scrub and
    the time series of the coordinates."""
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
