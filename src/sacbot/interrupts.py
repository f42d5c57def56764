"""How the long-running commands stop: SIGTERM unwinds like Ctrl-C (a `KeyboardInterrupt` in the main thread),
through the same clean-up and saves, so a supervisor's `kill` loses no more than a Ctrl-C does.

`stops_on_sigterm()` is for commands whose clean-up only stops processes. `stops_once()` is for commands that
save on the way out: the first SIGINT or SIGTERM interrupts, later ones are ignored until the save is done
(a campaign forwards its own SIGTERM to its pretraining, and a tournament its own to its game processes, which
may already have had the terminal's Ctrl-C).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def stops_on_sigterm() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def stops_once() -> Iterator[None]:
    fired = False

    def interrupt_once(signum: int, frame: FrameType | None) -> None:
        nonlocal fired
        if not fired:
            fired = True
            raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt_once) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
