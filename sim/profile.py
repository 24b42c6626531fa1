"""Availability profile: free capacity over time, per resource.

The profile is a step function over integer seconds. Breakpoints ``times[0] <
times[1] < ...`` split the future into segments; segment ``i`` covers
``[times[i], times[i+1])`` and the last segment extends to infinity. ``free[k][i]`` is
the free capacity of resource ``k`` on segment ``i``. Reservations subtract from it and
releases add back. The backfilling policies, the slack-based scheduler and the exact
insertion models all plan on this one structure.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence


class Profile:
    """Free capacity per resource as a step function of time (integer seconds).

    Parameters
    ----------
    capacity : sequence of int
        Capacity per resource (length K).
    start : int
        Time of the first breakpoint, seconds; the profile knows nothing before it.
    """

    __slots__ = ("capacity", "K", "times", "free", "_compacted")

    def __init__(self, capacity: Sequence[int], start: int = 0) -> None:
        self.capacity = tuple(int(c) for c in capacity)
        self.K = len(self.capacity)
        self.times: list[int] = [int(start)]
        self.free: list[list[int]] = [[c] for c in self.capacity]
        self._compacted = 1

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self.times)

    def copy(self) -> Profile:
        """An independent copy."""
        p = Profile.__new__(Profile)
        p.capacity = self.capacity
        p.K = self.K
        p.times = self.times.copy()
        p.free = [f.copy() for f in self.free]
        p._compacted = self._compacted
        return p

    def _index(self, t: int) -> int:
        """Index of the segment containing ``t`` (``t`` must be >= ``times[0]``)."""
        if t < self.times[0]:
            raise ValueError(f"time {t} is before the profile start {self.times[0]}")
        return bisect_right(self.times, t) - 1

    def free_at(self, t: int) -> tuple[int, ...]:
        """Free capacity per resource at time ``t`` (seconds)."""
        i = self._index(t)
        return tuple(f[i] for f in self.free)

    def segments(self) -> Iterator[tuple[int, int | None, tuple[int, ...]]]:
        """Yield ``(begin, end, free)`` per segment; ``end`` is None for the last one."""
        n = len(self.times)
        for i in range(n):
            end = self.times[i + 1] if i + 1 < n else None
            yield self.times[i], end, tuple(f[i] for f in self.free)

    def fits(self, start: int, duration: int, demand: Sequence[int]) -> bool:
        """Whether ``demand`` fits on ``[start, start + duration)``."""
        if duration <= 0:
            return True
        times, free = self.times, self.free
        i = self._index(start)
        end = start + duration
        n = len(times)
        while i < n and times[i] < end:
            for k in range(self.K):
                if free[k][i] < demand[k]:
                    return False
            i += 1
        return True

    def earliest_start(self, duration: int, demand: Sequence[int], not_before: int) -> int:
        """Earliest ``t >= not_before`` at which ``demand`` fits for ``duration`` seconds.

        Raises ValueError when the demand exceeds the capacity that remains free at
        the end of the profile (it would never fit).
        """
        times, free, K = self.times, self.free, self.K
        n = len(times)
        if not_before < times[0]:
            not_before = times[0]
        i = bisect_right(times, not_before) - 1
        start = not_before
        if duration <= 0:
            return start  # consistent with fits(): an empty interval fits anywhere
        if K == 1:
            f0 = free[0]
            d0 = demand[0]
            while True:
                end = start + duration
                j = i
                while True:
                    if f0[j] < d0:
                        break
                    j += 1
                    if j >= n or times[j] >= end:
                        return start
                if j == n - 1:
                    raise ValueError(f"demand {tuple(demand)} never fits (tail free {f0[-1]})")
                i = j + 1
                start = times[i]
        while True:
            end = start + duration
            j = i
            ok = True
            while True:
                for k in range(K):
                    if free[k][j] < demand[k]:
                        ok = False
                        break
                if not ok:
                    break
                j += 1
                if j >= n or times[j] >= end:
                    return start
            if j == n - 1:
                raise ValueError(
                    f"demand {tuple(demand)} never fits (tail free {tuple(f[-1] for f in free)})")
            i = j + 1
            start = times[i]

    # ------------------------------------------------------------------ updates
    def _split(self, t: int) -> int:
        """Ensure a breakpoint at ``t`` and return its index."""
        times = self.times
        i = bisect_right(times, t) - 1
        if i < 0:
            raise ValueError(f"time {t} is before the profile start {times[0]}")
        if times[i] == t:
            return i
        times.insert(i + 1, t)
        for f in self.free:
            f.insert(i + 1, f[i])
        return i + 1

    def _add(self, start: int, duration: int, demand: Sequence[int], sign: int) -> None:
        if duration <= 0:
            return
        a = self._split(start)
        b = self._split(start + duration)
        if self.K == 1:  # fast path: one bound to check, one new segment list
            d = demand[0] * sign
            if d == 0:
                return
            f = self.free[0]
            seg = f[a:b]
            if (min(seg) + d < 0) if d < 0 else (max(seg) + d > self.capacity[0]):
                bad = min(seg) + d if d < 0 else max(seg) + d
                i = a + [v + d for v in seg].index(bad)
                raise ValueError(
                    f"resource 0: free capacity would become {bad} at t={self.times[i]} "
                    f"(capacity {self.capacity[0]})")
            f[a:b] = [v + d for v in seg]
            return
        updates = []
        for k in range(self.K):  # check every resource before changing any
            d = demand[k] * sign
            if d == 0:
                continue
            seg = self.free[k][a:b]
            low, high = min(seg) + d, max(seg) + d
            if low < 0 or high > self.capacity[k]:
                bad = low if low < 0 else high
                i = a + [v + d for v in seg].index(bad)
                raise ValueError(
                    f"resource {k}: free capacity would become {bad} at t={self.times[i]} "
                    f"(capacity {self.capacity[k]})")
            updates.append((k, [v + d for v in seg]))
        for k, seg in updates:
            self.free[k][a:b] = seg

    def reserve(self, start: int, duration: int, demand: Sequence[int]) -> None:
        """Subtract ``demand`` on ``[start, start + duration)``; ValueError if it does not fit."""
        self._add(start, duration, demand, -1)

    def release(self, start: int, duration: int, demand: Sequence[int]) -> None:
        """Add ``demand`` back on ``[start, start + duration)`` (``start`` clipped to the
        profile start)."""
        t0 = self.times[0]
        if start < t0:
            duration -= t0 - start
            start = t0
        self._add(start, duration, demand, +1)

    def advance(self, now: int) -> None:
        """Forget everything before ``now`` (seconds); merge equal neighbours when the
        number of breakpoints has doubled since the last merge."""
        times = self.times
        if now <= times[0]:
            return
        i = bisect_right(times, now) - 1
        if i > 0:
            del times[:i]
            for f in self.free:
                del f[:i]
        times[0] = now
        if len(times) > 2 * self._compacted + 8:
            self.compact()

    def compact(self) -> None:
        """Merge adjacent segments with equal free capacity in every resource."""
        times, free = self.times, self.free
        n = len(times)
        if n > 1:
            if self.K == 1:
                f = free[0]
                keep = [i for i in range(1, n) if f[i] != f[i - 1]]
            else:
                rows = list(zip(*free, strict=True))
                keep = [i for i in range(1, n) if rows[i] != rows[i - 1]]
            if len(keep) < n - 1:
                keep.insert(0, 0)
                self.times = [times[i] for i in keep]
                self.free = [[f[i] for i in keep] for f in free]
        self._compacted = len(self.times)
