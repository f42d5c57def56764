"""Run a function with the C GRU kernel on or off (tests compare the C loops with the torch ones)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from sacbot.agent import native_gru

T = TypeVar("T")


def with_kernel(enabled: bool, fn: Callable[[], T]) -> T:
    """fn() with the C kernel on or off; the loader keeps the loaded kernel in `value`, restored after."""
    kernel = native_gru.kernel()
    try:
        native_gru.kernel.value = kernel if enabled else None
        return fn()
    finally:
        native_gru.kernel.value = kernel
