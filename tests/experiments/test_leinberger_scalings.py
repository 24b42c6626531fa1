"""The Leinberger verdict rows judge the paper's claims under the G-b reading of AMB-1.14
only. The report says why, and which targets get another verdict when the same rules are
applied to the G-a rows of the same results files: this test computes those G-a
verdicts, so the report's sentence cannot drift from the results."""

from __future__ import annotations

import copy
from typing import Any

from sim.experiments import verdicts as v

OTHER_UNDER_GA = {"bb-art-nofull": v.NOT, "s-bb-uniform-exp": v.REPRODUCED}
"""The targets whose verdict differs under G-a, with the G-a verdict (the report names
them)."""


def _ga(loc: dict[str, Any]) -> dict[str, Any]:
    loc = copy.deepcopy(loc)
    loc["where"]["scaling"] = "G-a"
    return loc


def ga_verdict(t: dict[str, Any]) -> str:
    """The verdict of target ``t`` on the G-a rows of its results file; cells without a
    number (a G-a cell with no stationary seed, ``-``) are left out, with their pair."""
    vals = v.read_values("leinberger", _ga(t["ours"]))
    ref = v.read_values("leinberger", _ga(t["other"])) if "other" in t else None
    if ref is None:
        vals = [x for x in vals if x.mean is not None]
    else:
        pairs = [(a, b) for a, b in zip(vals, ref, strict=True)
                 if a.mean is not None and b.mean is not None]
        vals, ref = [a for a, _ in pairs], [b for _, b in pairs]
    return v.RULES[t["rule"]](t, vals, ref)[0]


def g_b_targets() -> list[dict[str, Any]]:
    return [t for t in v.load_targets("leinberger")
            if t.get("ours", {}).get("where", {}).get("scaling") == "G-b"
            and t["rule"] not in ("calibration", "construction")]


def test_the_report_names_every_target_whose_verdict_differs_under_g_a() -> None:
    other = {}
    for t in g_b_targets():
        if (ga := ga_verdict(t)) != v.evaluate("leinberger", t).verdict:
            other[t["id"]] = ga
    assert other == OTHER_UNDER_GA
    report = " ".join((v.EXPERIMENTS / "leinberger" / "REPORT.md").read_text().split())
    for tid, verdict in other.items():
        assert f"`{tid}` {verdict} under G-a" in report, tid
