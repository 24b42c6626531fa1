"""The vector-packing benchmark classes (``instances.vbp``) and their ``schedsearch
generate kresource_vbp`` hook."""

from __future__ import annotations

import json

import pytest

from instances.vbp import CLASSES, instance
from sim.problems.generate import instance as generated
from sim.problems.generate import write_set
from sim.problems.kresource import from_dict


@pytest.mark.parametrize("cls", CLASSES)
def test_every_class_is_a_valid_epochs_problem_and_deterministic(cls: str) -> None:
    a, b = instance(cls, 60, 4, 5), instance(cls, 60, 4, 5)
    assert a == b and a != instance(cls, 60, 4, 6)
    p = from_dict(a)
    assert p.n == 60 and p.K == 4


def test_class_ranges() -> None:
    p = from_dict(instance("ct1", 200, 3, 1))
    assert p.capacity == (1000,) * 3
    assert all(100 <= x <= 400 for d in p.demands for x in d)
    p = from_dict(instance("ct7", 200, 3, 1))  # resources 0 and 1 paired, 2 alone
    assert p.capacity == (150,) * 3
    assert all(abs(d[0] - d[1]) <= 10 and 20 <= d[2] <= 100 for d in p.demands)
    p = from_dict(instance("ct8", 200, 2, 1))
    assert all(110 <= d[0] + d[1] <= 130 for d in p.demands)
    p = from_dict(instance("ct10", 60, 3, 1))  # 20 triplets, each filling an epoch exactly
    assert all(sum(d[k] for d in p.demands) == 20 * 100 for k in range(3))
    assert all(0 <= x <= 50 for d in p.demands for x in d)
    assert not all(sum(p.demands[t + i][0] for i in range(3)) == 100
                   for t in range(0, 60, 3))  # shuffled: not in drawn order
    p = from_dict(instance("ct9", 100, 2, 1))  # the volume bound is about 1000 per epoch
    assert all(c >= max(d[k] for d in p.demands) for k, c in enumerate(p.capacity))
    p = from_dict(instance("pan", 100, 5, 1))
    assert p.capacity == (100,) * 5 and all(max(d) <= 100 for d in p.demands)


@pytest.mark.parametrize(("args", "word"), [
    (("ct11", 20, 2, 1), "class"), (("ct10", 20, 2, 1), "multiple of 3"),
    (("ct7", 20, 1, 1), "K must be at least 2"), (("ct1", 0, 2, 1), "n must"),
    (("ct1", 20, 21, 1), "K must"), (("ct1", 20, 2, -1), "seed")])
def test_bad_arguments_are_refused(args, word) -> None:
    with pytest.raises(ValueError, match=word):
        instance(*args)


def test_generate_hook_writes_epochs_files(tmp_path) -> None:
    paths = write_set("kresource_vbp", 2, 1, tmp_path, cls=10, n=30, K=3)
    for path in paths:
        data = json.loads(path.read_text())
        assert data["problem"] == "kresource_epochs"
        assert from_dict(data).n == 30
    assert generated("kresource_vbp", 1, cls=10, n=30, K=3) == json.loads(
        paths[0].read_text())
    with pytest.raises(ValueError, match="multiple of 3"):
        write_set("kresource_vbp", 1, 1, tmp_path / "x", cls=10, n=31)
    assert not (tmp_path / "x").exists()
