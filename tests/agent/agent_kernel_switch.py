"""Run a function with the C GRU kernel on or off (tests compare the C loops with the torch ones)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sacbot.agent import accel

T = TypeVar("T")


def with_kernel(enabled: bool, fn: Callable[[], T]) -> T:
    """fn() with the `native` part on or off, every other part as it is."""
    chosen = set(accel.active()) | {"native"} if enabled else set(accel.active()) - {"native"}
    with accel.using(chosen):
        return fn()
