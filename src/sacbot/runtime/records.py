"""The plain records that cross from the realtime thread to the trainer thread."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np


class Transition(NamedTuple):
    """One step (s, a, r, s', done, h): h is the actor's hidden state before it acted on s."""

    obs: np.ndarray
    action: np.ndarray
    reward: float
    next_obs: np.ndarray
    done: bool
    hidden: np.ndarray


class EpisodeCut:
    """Channel marker: the open round ended without a RoundEnded (game aborted); close it, not as terminal."""


EPISODE_CUT = EpisodeCut()
ChannelItem = Transition | EpisodeCut


@dataclass(frozen=True)
class RoundReport:
    """What the realtime thread knows at RoundEndedEventForBot; the trainer thread saves and logs it."""

    round: int  # the game's round number (1-based)
    outcome: str  # "won", "lost" or "survived" (alive at the end without winning)
    reward_sum: float
    turns: int  # ticks this bot received in the round
    skipped_turns: int
    p50_ms: float  # tick received -> intent sent
    p99_ms: float
    max_ms: float
    dropped_transitions: int  # dropped by the channel during this round
    own_score: float  # exact: the rise of ResultsForBot.total_score
    enemy_score: float  # rebuilt from events (see scoring.py)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "outcome": self.outcome,
            "reward_sum": round(self.reward_sum, 6),
            "turns": self.turns,
            "skipped_turns": self.skipped_turns,
            "tick_to_intent_p50_ms": round(self.p50_ms, 4),
            "tick_to_intent_p99_ms": round(self.p99_ms, 4),
            "tick_to_intent_max_ms": round(self.max_ms, 4),
            "dropped_transitions": self.dropped_transitions,
            "own_score": round(self.own_score, 3),
            "enemy_score": round(self.enemy_score, 3),
            **self.extra,
        }
