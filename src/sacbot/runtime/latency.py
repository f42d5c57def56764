"""Tick-to-intent latencies, recorded on the realtime thread without allocating per tick."""

from __future__ import annotations

import numpy as np


class LatencyRecorder:
    """Durations in nanoseconds in a preallocated buffer (doubling when full, rare); stats in milliseconds."""

    def __init__(self, capacity: int = 4096) -> None:
        self._buf = np.zeros(capacity, dtype=np.int64)
        self._n = 0

    def record(self, duration_ns: int) -> None:
        if self._n == len(self._buf):
            self._buf = np.concatenate([self._buf, np.zeros_like(self._buf)])
        self._buf[self._n] = duration_ns
        self._n += 1

    def reset(self) -> None:
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def values_ms(self) -> np.ndarray:
        return self._buf[: self._n].astype(np.float64) / 1e6

    def stats_ms(self) -> tuple[float, float, float]:
        """(p50, p99, max) in ms; zeros when empty."""
        if self._n == 0:
            return 0.0, 0.0, 0.0
        values = self.values_ms()
        p50, p99 = np.percentile(values, [50, 99])
        return float(p50), float(p99), float(values.max())
