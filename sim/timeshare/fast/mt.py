"""CPython's ``random.Random`` streams, replicated exactly for numba.

One stream is a row ``mt[s, 0:624]`` of the MT19937 state words (int64 holding uint32
values) plus its index ``mt[s, 624]`` and, for ``gauss``, the cached second normal
deviate in ``gn[s]`` (NaN = none). ``state_of(random.Random)`` takes the state from
``getstate()`` so seeding stays CPython's. Every draw below is the CPython 3.11
algorithm: ``random()`` (53 bits from two words), ``getrandbits(k <= 32)``,
``_randbelow`` (rejection on ``k = n.bit_length()`` bits), ``expovariate`` and
``gauss`` (Box-Muller pair with the cached deviate).
"""

from __future__ import annotations

import math
import random

import numpy as np
from numba import njit

_N, _M = 624, 397
_MASK = 0xFFFFFFFF


def state_of(rng: random.Random) -> tuple[np.ndarray, float]:
    """(625 int64 words: state and index, cached gauss deviate or NaN) of ``rng``."""
    version, internal, gauss_next = rng.getstate()
    if version != 3 or len(internal) != _N + 1:
        raise ValueError(f"unsupported random.Random state version {version}")
    words = np.array(internal, dtype=np.int64)
    return words, (math.nan if gauss_next is None else float(gauss_next))


@njit(cache=True)
def _regen(mt, s):
    """Regenerate the 624 state words of stream ``s`` (once per 624 draws: not inlined,
    which keeps the inlined ``genrand`` small)."""
    for kk in range(_N):
        y = (mt[s, kk] & 0x80000000) | (mt[s, (kk + 1) % _N] & 0x7FFFFFFF)
        v = mt[s, (kk + _M) % _N] ^ (y >> 1)
        if y & 1:
            v ^= 0x9908B0DF
        mt[s, kk] = v


@njit(cache=True, inline="always")
def genrand(mt, s):
    """Next 32-bit output of stream ``s``."""
    i = mt[s, _N]
    if i >= _N:
        _regen(mt, s)
        i = 0
    y = mt[s, i]
    mt[s, _N] = i + 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & _MASK


@njit(cache=True, inline="always")
def rand(mt, s):
    """``random()``: a float in [0, 1) with 53 random bits."""
    a = genrand(mt, s) >> 5
    b = genrand(mt, s) >> 6
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def randbelow(mt, s, n):
    """``_randbelow(n)`` (= ``randrange(n)``) for 0 < n < 2**32."""
    k = 0
    m = n
    while m > 0:
        k += 1
        m >>= 1
    r = genrand(mt, s) >> (32 - k)
    while r >= n:
        r = genrand(mt, s) >> (32 - k)
    return r


@njit(cache=True, inline="always")
def expovariate(mt, s, lambd):
    """``expovariate(lambd)``."""
    return -math.log(1.0 - rand(mt, s)) / lambd


@njit(cache=True, inline="always")
def gauss(mt, gn, s, mu, sigma):
    """``gauss(mu, sigma)`` with CPython's cached second deviate."""
    z = gn[s]
    gn[s] = np.nan
    if np.isnan(z):
        x2pi = rand(mt, s) * (2.0 * math.pi)
        g2rad = math.sqrt(-2.0 * math.log(1.0 - rand(mt, s)))
        z = math.cos(x2pi) * g2rad
        gn[s] = math.sin(x2pi) * g2rad
    return mu + z * sigma
