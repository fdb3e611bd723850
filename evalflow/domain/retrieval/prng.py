"""mulberry32, bit-exact with the usual JavaScript one-liner (SPEC §4).

    function mulberry32(a) { return function() {
      a |= 0; a = a + 0x6D2B79F5 | 0;
      var t = Math.imul(a ^ a >>> 15, 1 | a);
      t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
      return ((t ^ t >>> 14) >>> 0) / 4294967296;
    } }

The state after n draws is `seed + n * 0x6D2B79F5 (mod 2**32)` and each output is a pure
function of that state, so the stream is a counter-based hash: `uniforms(n)` computes n draws
at once with numpy uint32 arithmetic and yields exactly the values the scalar path does.
JavaScript's `|0`, `>>> 0` and `Math.imul` only ever affect how the low 32 bits are read, so
unsigned 32-bit arithmetic throughout gives the same bits.
"""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
INCREMENT = 0x6D2B79F5
TWO_POW_32 = 4294967296.0


def _output_scalar(state: int) -> int:
    t = ((state ^ (state >> 15)) * (1 | state)) & MASK32
    t = ((t + (((t ^ (t >> 7)) * (61 | t)) & MASK32)) & MASK32) ^ t
    return t ^ (t >> 14)


def _output_vector(states: np.ndarray) -> np.ndarray:
    # uint32 array arithmetic wraps modulo 2**32 like Math.imul and `| 0`.
    t = (states ^ (states >> np.uint32(15))) * (states | np.uint32(1))
    t = (t + (t ^ (t >> np.uint32(7))) * (t | np.uint32(61))) ^ t
    return t ^ (t >> np.uint32(14))


class Mulberry32:
    """One mulberry32 stream. `seed` is taken modulo 2**32, as JavaScript's `a |= 0` does."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
            raise TypeError(f"mulberry32 seed must be an integer, got {type(seed).__name__}")
        self._state = int(seed) & MASK32

    @property
    def state(self) -> int:
        """The internal 32-bit state (before the next draw's increment)."""
        return self._state

    def next_uint32(self) -> int:
        """The next raw 32-bit output."""
        self._state = (self._state + INCREMENT) & MASK32
        return _output_scalar(self._state)

    def random(self) -> float:
        """The next float in [0, 1), identical to the JavaScript function's return value."""
        return self.next_uint32() / TWO_POW_32

    def uint32s(self, n: int) -> np.ndarray:
        """The next `n` raw outputs as a uint32 array (advances the stream by `n`)."""
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        steps = np.arange(1, n + 1, dtype=np.uint64)
        states = ((self._state + steps * INCREMENT) & MASK32).astype(np.uint32)
        self._state = (self._state + n * INCREMENT) & MASK32
        return _output_vector(states)

    def uniforms(self, n: int) -> np.ndarray:
        """The next `n` floats in [0, 1) as float64 (advances the stream by `n`).

        Every uint32 / 2**32 is exact in float64, so these equal `random()` called n times.
        """
        return self.uint32s(n).astype(np.float64) / TWO_POW_32
