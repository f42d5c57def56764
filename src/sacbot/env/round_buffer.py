"""One arena's open round, collected step by step, and its storing into the sequence replay, whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class RoundBuffer:
    """One arena's open round: obs o_1..o_t, and per step the action, reward and hidden state acted from."""

    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    hidden: list[np.ndarray] = field(default_factory=list)


def store_round(replay: Any, buf: RoundBuffer, terminated: bool) -> None:
    """A finished (or truncated) round into the sequence replay, whole (skipped: empty or over capacity)."""
    t = len(buf.actions)
    if t == 0 or t > replay.capacity:
        return
    done = np.zeros(t, np.float32)
    done[-1] = 1.0 if terminated else 0.0
    replay.add_round(
        np.stack(buf.obs),
        np.stack(buf.actions).astype(np.float32),
        np.asarray(buf.rewards, np.float32),
        done,
        np.stack(buf.hidden),
    )


__all__ = ["RoundBuffer", "store_round"]
