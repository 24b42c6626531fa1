"""A user's policy run by ``simulate`` in the sandbox worker declares its guarantees and
their terms from there; the command validates its schedule here, from the schedule and the
job data: one that declares a selective reservation or a slack bound and breaks it is one
line naming the policy and the job (exit 2), whatever it promises."""

from __future__ import annotations

import textwrap

import pytest

from tests.cli.test_foreign_policy import cli, one_line_error, work  # noqa: F401 (fixture)

LIAR = textwrap.dedent('''
    """Greedy first fit without a reservation that also starves job 3 until it is alone in
    the queue, while declaring ``kind`` under its terms and promising every job a start
    it keeps."""
    from sim.batch.policy import BasePolicy


    class Liar(BasePolicy):
        name = "liar"

        def __init__(self, kind="reservation"):
            self.kind = kind

        def reset(self, machine):
            super().reset(machine)
            self.free, self.queue, self.ids = machine.capacity[0], [], []

        def on_arrival(self, job, now):
            self.queue.append(job)
            self.ids.append(job.id)

        def on_end(self, job, now):
            self.free += job.procs

        def schedule(self, now):
            started = []
            for job in list(self.queue):
                last = len(self.queue) == 1
                if job.procs <= self.free and (job.id != 3 or last):
                    self.free -= job.procs
                    self.queue.remove(job)
                    started.append(job)
            return started

        def next_wakeup(self, now):
            return None

        def promises(self):
            return dict.fromkeys(self.ids, 10 ** 12)

        def guarantees(self):
            return frozenset({self.kind})

        def guarantee_terms(self):
            if self.kind == "reservation":
                return {"reservation": {"threshold": 1.0}}
            return {"slack-bound": {"max_slack": 10.0, "unbounded": []}}
''')


@pytest.mark.parametrize("kind", ["reservation", "slack-bound"])
def test_a_user_policy_breaking_its_declared_guarantee_is_one_line(work, kind):  # noqa: F811
    (work / "liar.py").write_text(LIAR)
    p = cli("simulate", "t.swf", "--policy", "liar:Liar", "--set", f"kind={kind}",
            "--quiet", cwd=work)
    one_line_error(p, "produced a schedule the validator rejects", "liar: job ",
                   "recomputed from the schedule", f"({kind})")
