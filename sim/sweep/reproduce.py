"""The registry behind ``schedsearch reproduce NAME``: one entry per paper table or
figure.

Adding a reproduction (other studies extend this dict; keep your block together)::

    REPRODUCTIONS["leinberger-fig3"] = "sim.experiments.leinberger.figs:main fig3"

The target is ``"module:function"``, optionally followed by arguments that come first
(``"sim.experiments.gine.figs:main fig4"`` runs ``main(["fig4", *argv])``). The function is
called as ``function(argv)`` with the arguments that follow the name on the command line
(an argparse ``main``; it should offer ``--quick`` when a smaller configuration exists,
write committed results under ``sim/experiments/<study>/results/`` only in its full
configuration, and write a quick run elsewhere saying it is partial), or as
``function()`` when it takes no parameter (then extra arguments are refused). It returns
an exit code or None. ``--help`` after the name prints the function's help (or its
module's docstring) and never starts a run.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

REPRODUCTIONS: dict[str, str] = {}

# --- Talby & Feitelson (IPPS'99), slack-based backfilling, on the sweep layer
REPRODUCTIONS.update({
    "talby-table1": "sim.experiments.talby.tables:table1_main",
    "talby-table2": "sim.experiments.talby.tables:table2_main",
    "talby-table3": "sim.experiments.talby.tables:table3_main",
    "talby-table4": "sim.experiments.talby.tables:table4_main",
    "talby-table5": "sim.experiments.talby.tables:table5_main",
})

# --- Suh, Rudolph & Devadas (JSSPP'01), memory-aware scheduling (own entry points)
REPRODUCTIONS.update({
    "memory_casestudy": "sim.experiments.suh.casestudy:main",
    "memory_fig2": "sim.experiments.suh.fig2:main",
    "memory_gap": "sim.experiments.suh.gap:main",
})

# --- Leinberger, Karypis & Kumar (TR 99-025), K-resource backfilling
REPRODUCTIONS.update({
    f"leinberger-{fig}": f"sim.experiments.leinberger.figs:main {fig}"
    for fig in ("fig1", "fig2", "fig3", "gaps", "response")})

# --- Gine, Solsona, Hernandez & Luque, CSM coscheduling (figure names of the paper)
REPRODUCTIONS.update({
    f"gine-{fig}": f"sim.experiments.gine.figs:main {fig}"
    for fig in ("calib", "fig4", "fig5-6", "fig7", "fig8-9", "fig10-11", "fig12", "gang",
                "sens")})

# --- Karl, synchronized scheduling servers (Figures 1-12 and the spec 2.6 targets)
REPRODUCTIONS.update({
    f"karl-{fig}": f"sim.experiments.karl.figs:main {fig}"
    for fig in (*(f"fig{i}" for i in range(1, 13)), "fig8r", "fig7m", "fig9m", "fig11m",
                "fig12m", "targets", "readings")})


def _split(name: str) -> tuple[str, list[str]]:
    try:
        path = REPRODUCTIONS[name]
    except KeyError:
        raise ValueError(f"unknown reproduction {name!r}; known: "
                         f"{', '.join(sorted(REPRODUCTIONS))}") from None
    head, *preset = path.split()
    return head, preset


def target(name: str) -> Callable[..., Any]:
    """The function registered as ``name``."""
    head, _ = _split(name)
    module, _, attr = head.partition(":")
    return getattr(importlib.import_module(module), attr)


def describe(name: str) -> str:
    """First line of the target's docstring (or of its module's)."""
    fn = target(name)
    doc = inspect.getdoc(fn) or inspect.getdoc(sys.modules[fn.__module__]) or ""
    return doc.splitlines()[0] if doc else ""


def run(name: str, argv: Sequence[str] = ()) -> int:
    """Run the reproduction ``name`` with ``argv``; returns an exit code."""
    fn = target(name)
    preset = _split(name)[1]
    argv = [*preset, *argv]
    takes_argv = bool(inspect.signature(fn).parameters)
    if not takes_argv:
        if any(a in ("-h", "--help") for a in argv):
            doc = inspect.getdoc(sys.modules[fn.__module__]) or describe(name)
            print(f"schedsearch reproduce {name}: {doc}\n\n(no options: writes the full "
                  "configuration's results)")
            return 0
        if argv:
            raise ValueError(f"reproduction {name!r} takes no options, got {list(argv)}")
        rc = fn()
    else:
        try:
            rc = fn(list(argv))
        except SystemExit as exc:  # argparse --help or a usage error
            code = exc.code
            return code if isinstance(code, int) else (0 if code is None else 2)
    return int(rc or 0)
