"""Bounded retries with exponential back-off (pure)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_s: float = 1.0
    factor: float = 2.0
    max_backoff_s: float = 60.0

    def may_retry(self, failures: int) -> bool:
        """After `failures` failed attempts of one chunk, may it run again?"""
        return failures <= self.max_retries

    def delay(self, failures: int) -> float:
        """Seconds to wait before the attempt that follows the `failures`-th failure (1-based)."""
        if failures <= 0:
            return 0.0
        return float(min(self.max_backoff_s, self.backoff_s * self.factor ** (failures - 1)))
