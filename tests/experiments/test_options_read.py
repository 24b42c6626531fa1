"""Every option a study's command line takes either acts on the figure asked for or is
refused: one line naming the option and the figure, exit 2, nothing written. The options
a figure reads are derived from its code (:mod:`sim.experiments.reads`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.cli import main
from sim.experiments.reads import EVERYTHING, ReadsError, reads

# ------------------------------------------------------------------ the analysis itself

class _Conf:
    def __init__(self) -> None:
        self.a, self.b, self.c = 1, 2, 3

    @property
    def double_b(self) -> int:
        return 2 * self.b

    def with_c(self, x: int) -> int:
        return x + self.c


def _helper(conf: _Conf) -> int:
    return conf.a


def _by_keyword(*, conf: _Conf) -> int:
    return conf.double_b


def _figure(conf: _Conf) -> int:
    return _helper(conf) + _by_keyword(conf=conf) + conf.with_c(0)


def _reads_keys(cfg: dict) -> int:
    return cfg["x"] + cfg.get("y", 0)


def _records_whole(cfg: dict) -> dict:
    return {"config": cfg}


def _aliases(cfg: dict) -> dict:
    other = cfg
    return other


def _to_builtin(cfg: dict) -> str:
    return repr(cfg)


def test_reads_follows_calls_methods_and_properties() -> None:
    assert reads(_figure, "conf", _Conf) == {"a", "b", "c"}
    assert reads(_helper, "conf", _Conf) == {"a"}


def test_reads_lists_constant_keys_and_a_whole_record_reads_everything() -> None:
    assert reads(_reads_keys, "cfg") == {"x", "y"}
    assert reads(_records_whole, "cfg") == {EVERYTHING}


@pytest.mark.parametrize("fn", [_aliases, _to_builtin])
def test_a_use_it_cannot_follow_is_an_error_not_a_guess(fn) -> None:
    with pytest.raises(ReadsError, match="cannot be followed"):
        reads(fn, "cfg")


# ------------------------------------------------------------------ each study's figures

def _gine():
    from sim.experiments.gine import figs

    return figs


def _karl():
    from sim.experiments.karl import figs

    return figs


def _leinberger():
    from sim.experiments.leinberger import figs

    return figs


@pytest.mark.parametrize("study,name", [
    *(("gine", n) for n in _gine().FIGURES), *(("karl", n) for n in _karl().RUNNERS),
    *(("leinberger", n) for n in _leinberger().RUNNERS)])
def test_every_figures_options_are_derived_from_its_code(study, name) -> None:
    module = {"gine": _gine, "karl": _karl, "leinberger": _leinberger}[study]()
    assert module.options_read(name)  # no ReadsError: the code can be followed


def test_what_the_figures_read() -> None:
    gine, karl, lein = _gine(), _karl(), _leinberger()
    assert gine.options_read("fig4") == {"figure", "quick", "out", "seeds", "scale"}
    assert {"pdt"} <= gine.options_read("fig5-6") and "mfreq" not in gine.options_read("fig5-6")
    assert {"mfreq"} <= gine.options_read("fig8-9") and "pdt" not in gine.options_read("fig8-9")
    assert "seeds" in gine.options_read("msg-model")  # its seed count is --seeds
    assert "seeds" not in gine.options_read("corr-low")  # the eq. 9 study's own two
    assert "workers" not in karl.options_read("fig1")
    assert "workers" in karl.options_read("fig3")
    assert lein.options_read("fig1") == {"out"}
    assert lein.options_read("gaps") == {"out", "quick", "K"}
    assert lein.options_read("response") == {"out", "quick"}


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_gine_fig4_refuses_the_grid_options_it_never_reads(tmp_path, monkeypatch, capsys):
    """Figure 4 (the static two-job run) reads no grid option: given them, one line names
    each option and the figure, and nothing is written (no fig4.png the same as without
    them, no fig4.md recording them)."""
    figs = _gine()
    monkeypatch.setattr(figs, "QUICK_DIR", tmp_path / "quick")
    monkeypatch.setattr(figs, "FULL_DIR", tmp_path / "full")
    argv = ["reproduce", "gine-fig4", "--quick", "--pdt", "0.9", "--mfreq", "7", "--jobs",
            "3"]
    assert main(argv) == 2
    line = _one_line(capsys)
    assert "figure fig4 does not read --jobs, --mfreq, --pdt" in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv,needle", [
    (["reproduce", "gine-fig5-6", "--mfreq", "10"], "figure fig5-6 does not read --mfreq"),
    (["reproduce", "gine-fig7", "--plot-only", "--seeds", "2"],
     "--plot-only does not read --seeds"),
    (["reproduce", "karl-fig1", "--workers", "3"], "figure fig1 does not read --workers"),
    (["reproduce", "leinberger-gaps", "--seeds", "3"], "gaps does not read --seeds"),
    (["reproduce", "leinberger-response", "--K", "2"], "response does not read --K"),
    (["reproduce", "leinberger-gaps", "--protocol", "stationary"],
     "gaps does not read --protocol"),
    (["reproduce", "leinberger-fig2", "--report-only", "--workers", "3"],
     "fig2 --report-only does not read --workers"),
    (["reproduce", "talby-table1", "--quick", "--results", "R"],
     "--quick does not read --results"),
    (["reproduce", "talby-table2", "--dask", "tcp://h:1", "--jobs", "2"],
     "--dask does not read --jobs"),
    (["reproduce", "memory_casestudy", "--quick", "--block-pages", "64"],
     "--quick does not read --block-pages"),
    (["reproduce", "memory_casestudy", "--fit", "--build"], "--fit does not read --build"),
])
def test_an_option_the_run_does_not_read_is_refused_in_one_line(argv, needle, tmp_path,
                                                                 monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    before = _tree(Path(__file__).resolve().parents[2] / "sim" / "experiments")
    assert main(argv) == 2
    assert needle in _one_line(capsys)
    assert list(tmp_path.iterdir()) == []
    assert _tree(Path(__file__).resolve().parents[2] / "sim" / "experiments") == before


def _tree(root: Path) -> dict[str, int]:
    """Every file under ``root`` and its modification time (ns)."""
    return {str(p): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()
            and "__pycache__" not in p.parts}


@pytest.mark.parametrize("module,argv,needle", [
    ("sim.experiments.karl.bench", ["--skip-grid", "--workers", "3"],
     "--skip-grid does not read --workers"),
    ("sim.experiments.karl.bench", ["--skip-slots", "--time-limit", "3"],
     "--skip-slots does not read --time-limit"),
    ("sim.experiments.talby.speed", ["--hash", "d", "--repeat", "2"],
     "--hash does not read --repeat"),
    ("sim.experiments.engine.scaling_bench", ["--no-overload", "--window", "5"],
     "--no-overload does not read --window"),
    ("sim.experiments.engine.scaling_bench", ["--no-stationary", "--sizes", "5"],
     "--no-stationary does not read --sizes"),
    ("sim.experiments.leinberger.bl", ["--rate", "0.1", "--K", "2", "--queue", "64"],
     "--rate does not read --queue"),
    ("sim.experiments.leinberger.bl", ["--rate", "0.1", "--K", "2,8"], "--rate: one K only"),
    ("sim.experiments.leinberger.readings", ["weights", "--report-only", "--max-minutes",
                                             "5"], "--report-only does not read --max-minutes"),
    ("sim.experiments.talby.insertion_bench", ["--compare", "1", "--kmax", "5"],
     "--compare does not read --kmax"),
    ("sim.experiments.talby.insertion_bench", ["--compare-only", "ilp"],
     "--compare-only: only with --compare"),
    ("sim.experiments.talby.insertion_bench", ["--ilp-kmax", "3"], "--ilp-kmax: only with --ilp"),
    ("sim.experiments.leinberger.stationarity", ["--noise", "2", "--limit", "3"],
     "--noise does not read --limit"),
    ("sim.experiments.leinberger.stationarity", ["--noise-jobs", "20000"],
     "--noise-jobs: only with --noise"),
])
def test_a_benchmark_mode_refuses_the_options_it_skips(module, argv, needle, tmp_path,
                                                       monkeypatch, capsys):
    """A study's benchmark whose mode skips a section refuses that section's options
    (otherwise accepted while the section they shape does not run)."""
    import importlib

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        importlib.import_module(module).main(argv)
    assert exc.value.code == 2
    assert needle in _one_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_gine_fig12_never_reads_another_runs_grid_as_its_own(tmp_path, monkeypatch):
    """Figure 12 reuses the grids of Figures 8-11 from the output directory; a grid
    there computed with other options (here another seed count) is recomputed, not read
    under a header that states this run's --seeds."""
    import argparse
    import json

    figs = _gine()
    monkeypatch.setattr(figs.Setup, "mit", lambda self, c: 1.0)  # no calibration
    setup = figs.Setup(argparse.Namespace(
        quick=True, figure="fig12", scale=None, seeds=1, jobs=6, mfreq=[1000.0], pdt=None,
        engine="python", out=str(tmp_path)))
    calls = []

    def computes(name):
        def run(s):
            calls.append(name)
            points = figs._mfreq_points(s, *figs.FIG12_GRIDS[name])
            figs.grid_path(s, name).write_text(json.dumps({
                k: {"ident": figs.point_ident(c, p, o, s.seeds),
                    "metrics": {"slowdown_local": [7.0]}} for k, c, p, o in points}))
        return run

    monkeypatch.setattr(figs, "fig_load1", computes("fig8-9"))
    monkeypatch.setattr(figs, "fig_load15", computes("fig10-11"))
    for name in ("fig8-9", "fig10-11"):  # another run's grids: 3 seeds, other metrics
        points = figs._mfreq_points(setup, *figs.FIG12_GRIDS[name])
        (tmp_path / f"{name}.json").write_text(json.dumps({
            k: {"ident": figs.point_ident(c, p, o, 3),
                "metrics": {"slowdown_local": [99.0, 99.0, 99.0]}}
            for k, c, p, o in points}))
    md = figs.fig_local(setup)
    assert calls == ["fig8-9", "fig10-11"]
    assert "99.00" not in md and "7.00" in md
    calls.clear()
    figs.fig_local(setup)  # now the grids are this run's: read, not computed again
    assert calls == []


def test_gine_gang_exact_under_another_time_limit_is_partial(tmp_path, monkeypatch):
    """--time-limit acts: a limit other than the committed files' 60 s is a partial run,
    written beside the quick runs, never over the committed full configuration."""
    from sim.experiments.gine import gang_exact

    calls = []
    monkeypatch.setattr(gang_exact, "FULL_DIR", tmp_path / "full")
    monkeypatch.setattr(gang_exact, "QUICK_DIR", tmp_path / "quick")
    monkeypatch.setattr(gang_exact, "run", lambda *a: calls.append(a) or "")
    assert gang_exact.main(["--time-limit", "5"]) == 0
    seeds, out, full, limit, _ = calls[-1]
    assert (out, full, limit, seeds) == (tmp_path / "quick", False, 5.0, gang_exact.SEEDS)
    assert gang_exact.main([]) == 0
    assert calls[-1][1:3] == (tmp_path / "full", True)
