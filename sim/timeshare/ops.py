"""The operations a task program yields.

A task program is a generator function ``program(ctx)``; it yields these operations
one at a time and the node executes them. All times are integer **microseconds**.

``yield Compute(us)`` returns the time (µs) at which the burst completed;
``yield Recv(...)`` returns the received :class:`Message`; ``yield Send(...)`` returns
the message id; ``yield Sleep(us)`` returns the wake-up time (µs).
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Compute(NamedTuple):
    """A CPU burst of ``us`` microseconds of CPU time (>= 0).

    The burst is cut by quantum expiry, preemption, stop or (with paged memory) a page
    fault at dispatch, and resumes where it stopped.
    """

    us: int


class Send(NamedTuple):
    """Send a message to task ``dst`` (task id). Takes no CPU time.

    The message stays in the sender's SMQ for the network latency (µs), then it is
    delivered into the receiver's RMQ, where it waits until a matching ``Recv``.
    """

    dst: int
    tag: Any = 0
    payload: Any = None


class Recv(NamedTuple):
    """Receive one message (from task ``src`` and with ``tag``; None matches any).

    If a matching message is in the RMQ it is consumed at once. Otherwise the task
    spins on the CPU for up to ``spin_us`` microseconds of CPU time (two-phase
    spin-blocking; 0 = plain blocking receive) and then blocks in the sleep queue
    until a matching message is delivered.
    """

    src: int | None = None
    tag: Any = None
    spin_us: int = 0


class Sleep(NamedTuple):
    """Leave the CPU and sleep for ``us`` microseconds of wall time (a timer)."""

    us: int


class Message(NamedTuple):
    """A delivered message; ``sent`` and ``delivered`` in microseconds."""

    id: int
    src: int
    dst: int
    tag: Any
    payload: Any
    sent: int
    delivered: int
