"""A malformed-input corpus for every problem family, generated from each family's own
JSON Schema and example (``schedsearch schema FAMILY --example``) and run through
``schedsearch solve``: every case exits 2 with one line that names the file and the
field, no traceback, and the file unchanged.

Mutations of the example: each required field removed; each integer or number field
(top level and in the first record of each list of records) set to a string, to a
boolean, to null, below its minimum and above its maximum; an unknown field added; the
wrong family; and files that are not a problem (empty, not JSON, a list, nested too
deep)."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from sim.cli import main
from sim.problems import MODULES, example, schema

FAMILIES = list(MODULES)


def _numbers(props: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, schema) of the integer/number properties of a record's schema."""
    out = []
    for name, spec in props.items():
        if spec.get("type") in ("integer", "number"):
            out.append((name, spec))
    return out


def _mutations(family: str) -> list[tuple[str, Any, str]]:
    """(case id, document, text the message must hold) for one family."""
    sch, base = schema(family), example(family)
    cases: list[tuple[str, Any, str]] = []
    for name in sch.get("required", []):
        if name == "problem":
            continue
        doc = copy.deepcopy(base)
        doc.pop(name, None)
        cases.append((f"missing-{name}", doc, name))
    records = [("", sch["properties"], base)]
    for name, spec in sch["properties"].items():
        items = spec.get("items", {})
        if spec.get("type") == "array" and items.get("type") == "object" and base.get(name):
            records.append((f"{name}[0].", items["properties"], base[name][0]))
    for prefix, props, where in records:
        for name, spec in _numbers(props):
            if name not in where:
                continue
            bad: list[tuple[str, Any]] = [("string", "x"), ("bool", True), ("null", None)]
            if "minimum" in spec:
                bad.append(("below-min", spec["minimum"] - 1))
            if "maximum" in spec:
                bad.append(("above-max", spec["maximum"] * 10 + 1))
            for tag, value in bad:
                doc = copy.deepcopy(base)
                target = doc if not prefix else doc[prefix.split("[")[0]][0]
                target[name] = value
                cases.append((f"{prefix}{name}-{tag}", doc, name))
    doc = copy.deepcopy(base)
    doc["no_such_field"] = 1
    cases.append(("unknown-field", doc, "no_such_field"))
    doc = copy.deepcopy(base)
    doc["problem"] = "no_such_family"
    cases.append(("wrong-family", doc, "problem"))
    return cases


CASES = [pytest.param(family, doc, expect, id=f"{family}-{case}")
         for family in FAMILIES for case, doc, expect in _mutations(family)]


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's refusals
        return exc.code


def _refused(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    err = capsys.readouterr().err
    assert _exit_code(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) <= 500, err
    assert str(path) in lines[0], err
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    return lines[0]


@pytest.mark.parametrize(("family", "doc", "expect"), CASES)
def test_malformed_problem_is_refused_by_field(family: str, doc: Any, expect: str,
                                               tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{family}.json"
    path.write_text(json.dumps(doc))
    line = _refused(path, capsys)
    assert expect in line, line


@pytest.mark.parametrize(("name", "text"), [
    ("empty", ""),
    ("not-json", "{problem: grouping"),
    ("a-list", "[1, 2, 3]"),
    ("a-number", "42"),
    ("deep", "[" * 100_000 + "]" * 100_000),
    ("nan", '{"problem": "grouping", "processors": NaN}'),
    ("binary", "\x00\xff\xfe garbage"),
])
def test_a_file_that_is_no_problem_is_refused(name: str, text: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{name}.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    _refused(path, capsys)


def test_the_examples_themselves_solve(tmp_path: Path) -> None:
    """The corpus starts from valid documents: each family's example is solved."""
    for family in FAMILIES:
        path = tmp_path / f"{family}.json"
        path.write_text(json.dumps(example(family)))
        assert _exit_code(["solve", str(path), "--time-limit", "10"]) == 0, family
