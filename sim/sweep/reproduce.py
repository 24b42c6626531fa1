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

from sim.argparser import program

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
REPRODUCTIONS["gine-fig2"] = "sim.experiments.gine.illustration:main"

# --- Karl, synchronized scheduling servers (Figures 1-12 and the spec 2.6 targets)
REPRODUCTIONS.update({
    f"karl-{fig}": f"sim.experiments.karl.figs:main {fig}"
    for fig in (*(f"fig{i}" for i in range(1, 13)), "fig8r", "fig7m", "fig9m", "fig11m",
                "fig12m", "targets", "readings")})


#: one line per entry whose target serves several figures (the others use their docstring)
DESCRIPTIONS: dict[str, str] = {
    "leinberger-fig1": "Leinberger et al. Figure 1: epochs of FCFS, FCFS/FF and the optimum on "
                       "six jobs.",
    "leinberger-fig2": "Leinberger et al. Figure 2: ART gain of BL/BB/CONS over FF-EASY "
                       "(K, load, distribution; also writes Figure 3).",
    "leinberger-fig3": "Leinberger et al. Figure 3: weighted ART gain (from Figure 2's run).",
    "leinberger-gaps": "FF/BL/BB and the epoch heuristics against the optimal selection and "
                       "the minimum epochs.",
    "leinberger-response": "Online policies against the proved offline minimum response "
                           "time.",
    "gine-calib": "Giné et al. eq. 5: load calibration, tasks per node at memory load 0.7 / "
                  "1.0 / 1.5.",
    "gine-fig2": "Giné et al. Figure 2: the three-node illustration of memory control (CSM "
                 "against PRED and RR).",
    "gine-fig4": "Giné et al. Figure 4: the static two-job run under CSM and PRED.",
    "gine-fig5-6": "Giné et al. Figures 5-6: correlation and slowdown at memory load 0.7.",
    "gine-fig7": "Giné et al. Figure 7: slowdown of large jobs against MNOD.",
    "gine-fig8-9": "Giné et al. Figures 8-9: faults and correlation at memory load 1.0.",
    "gine-fig10-11": "Giné et al. Figures 10-11: faults and correlation at memory load 1.5.",
    "gine-fig12": "Giné et al. Figure 12: slowdown of the local tasks.",
    "gine-gang": "The exact memory-feasible gang schedule as a reference (not in the paper).",
    "gine-sens": "Sensitivity of the CSM results to eq. 3 read literally or corrected.",
    **{f"karl-fig{i}": f"Karl Figure {i}: " + what for i, what in (
        (1, "CPU share achieved against the share asked for."),
        (2, "single barrier, run time without a server (base of Figures 3-4)."),
        (3, "single barrier, unsynchronized servers, ratio to Figure 2."),
        (4, "single barrier, synchronized servers, ratio to Figure 2."),
        (5, "barrier pattern, run time without a server (base of Figures 6-7)."),
        (6, "barrier pattern, blocking, ratio to Figure 5."),
        (7, "barrier pattern, spin-blocking, ratio to Figure 5."),
        (8, "complete pattern, run time without a server."),
        (9, "complete pattern, 100 µs spin, ratio to Figure 8."),
        (10, "complete pattern, spin, with servers."),
        (11, "variation coefficient of the run time without a server."),
        (12, "variation coefficient with synchronized servers."))},
    "karl-fig8r": "Karl section 4.4: complete pattern, blocking, ratio (the 6.5x penalty).",
    "karl-fig7m": "Karl Figure 7 under the captions' 100 ms spin reading.",
    "karl-fig9m": "Karl Figure 9 under the captions' 100 ms spin reading.",
    "karl-fig11m": "Karl Figure 11 under the captions' 100 ms spin reading.",
    "karl-fig12m": "Karl Figure 12 under the captions' 100 ms spin reading.",
    "karl-targets": "Karl: the acceptance targets checked against the computed cells.",
    "karl-readings": "Karl: targets 5-7 under the other readings of the wake-up and spin.",
}


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
    """The entry's line in :data:`DESCRIPTIONS`, else the first line of the target's
    docstring (or of its module's)."""
    if name in DESCRIPTIONS:
        return DESCRIPTIONS[name]
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
            raise ValueError(f"reproduce {name}: takes no options, got {list(argv)}")
        rc = fn()
    else:
        try:
            with program(f"schedsearch reproduce {name}", preset):
                rc = fn(list(argv))
        except SystemExit as exc:  # argparse --help or a usage error
            code = exc.code
            return code if isinstance(code, int) else (0 if code is None else 2)
    return int(rc or 0)
