"""Which speed-ups are on: SACBOT_ACCEL, read once at import; `using` switches them for a block (tests).

SACBOT_ACCEL is `all` (the default), `none`, a comma list of the parts to turn on (`native,heap`), or of the
parts to turn off from all (`-heap`). Parts: see `PARTS`. `SACBOT_NATIVE=0` also turns `native` off (and
the inference actor's C step with it, `sacbot.agent.native_build`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from sacbot.errors import UserError

PARTS = ("native", "min_q", "heap")


def parse(text: str) -> frozenset[str]:
    """The parts a SACBOT_ACCEL value turns on."""
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if not tokens or tokens == ["all"]:
        return frozenset(PARTS)
    if tokens == ["none"]:
        return frozenset()
    names = [t.removeprefix("-") for t in tokens]
    unknown = sorted(set(names) - set(PARTS))
    if unknown:
        raise UserError(
            f"SACBOT_ACCEL names unknown parts {unknown}: use all, none, or a comma list of"
            f" {', '.join(PARTS)} (a leading - turns one off)",
            2,
        )
    if all(t.startswith("-") for t in tokens):
        return frozenset(PARTS) - set(names)
    if any(t.startswith("-") for t in tokens):
        raise UserError("SACBOT_ACCEL: list the parts to turn on, or those to turn off (-part), not both", 2)
    return frozenset(names)


_on: frozenset[str] = parse(os.environ.get("SACBOT_ACCEL", "all"))


def enabled(part: str) -> bool:
    return part in _on


def active() -> tuple[str, ...]:
    """The parts that are on, in `PARTS` order."""
    return tuple(p for p in PARTS if p in _on)


@contextmanager
def using(parts: Iterable[str]) -> Iterator[None]:
    """Run a block with exactly these parts on (process-wide; `heap`, applied once per process, stays)."""
    global _on
    chosen = frozenset(parts)
    unknown = chosen - set(PARTS)
    if unknown:
        raise ValueError(f"unknown accel parts {sorted(unknown)}")
    before = _on
    _on = chosen
    try:
        yield
    finally:
        _on = before
