"""Best-gating rules: pure functions, no I/O (the shell that reads and writes slots is in `slots.py`).

A candidate replaces the stored best only when its score is strictly greater; a tie keeps the incumbent.
Scores are only compared when they measure the same thing (`score_kind`): a stored archive whose score
measures something else, has no score, or has no meta.json at all (the older layout) ranks as -inf, so the
first real candidate replaces it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from sacbot.checkpoint.archive import CheckpointMeta


class Incumbent(Enum):
    """What the slot holds, as far as the gate is concerned."""

    NONE = "none"  # no file
    OLDER_LAYOUT = "older layout"  # arrays only, no meta.json
    UNSCORED = "unscored"  # meta.json without a score
    OTHER_KIND = "other kind"  # a score that measures something else
    SCORED = "scored"  # comparable


@dataclass(frozen=True)
class GateDecision:
    replace: bool
    reason: str
    incumbent_rank: float  # the stored score as the gate ranks it (-inf when not comparable)


def classify(stored: CheckpointMeta | None, exists: bool, score_kind: str) -> Incumbent:
    if not exists:
        return Incumbent.NONE
    if stored is None:
        return Incumbent.OLDER_LAYOUT
    if stored.score is None:
        return Incumbent.UNSCORED
    if stored.score_kind != score_kind:
        return Incumbent.OTHER_KIND
    return Incumbent.SCORED


def rank(stored: CheckpointMeta | None, score_kind: str) -> float:
    """The stored score as comparable with a candidate of `score_kind`; -inf when it is not comparable."""
    if stored is None or stored.score is None or stored.score_kind != score_kind:
        return -math.inf
    return stored.score


def decide(score: float, score_kind: str, stored: CheckpointMeta | None, exists: bool) -> GateDecision:
    """Whether a candidate scoring `score` (measured as `score_kind`) replaces what the slot holds."""
    if not math.isfinite(score):
        raise ValueError(f"a candidate score must be finite, got {score!r}")
    if not score_kind:
        raise ValueError("a candidate score needs a score_kind saying what it measures")
    kind = classify(stored, exists, score_kind)
    incumbent_rank = rank(stored, score_kind)
    if kind is Incumbent.NONE:
        return GateDecision(True, "no stored best", incumbent_rank)
    if kind is Incumbent.OLDER_LAYOUT:
        return GateDecision(
            True, "the stored archive has no meta.json (older layout ranks -inf)", incumbent_rank
        )
    if kind is Incumbent.UNSCORED:
        return GateDecision(True, "the stored archive has no score (ranks -inf)", incumbent_rank)
    if kind is Incumbent.OTHER_KIND:
        assert stored is not None
        return GateDecision(
            True,
            f"the stored score measures {stored.score_kind!r}, not {score_kind!r} (ranks -inf)",
            incumbent_rank,
        )
    if score > incumbent_rank:
        return GateDecision(True, f"{score:g} > stored {incumbent_rank:g}", incumbent_rank)
    if score == incumbent_rank:
        return GateDecision(
            False, f"{score:g} ties the stored {incumbent_rank:g}; the incumbent stays", incumbent_rank
        )
    return GateDecision(False, f"{score:g} < stored {incumbent_rank:g}", incumbent_rank)
