"""The score a round earns the bot, and the per-opponent score share that gates its best slot (pure, no I/O).

A bot never sees its opponents' scores (ResultsForBot holds only its own, accumulated), so the share is built
from what the bot does see:

- its own round score: the rise of `ResultsForBot.total_score` from one RoundEndedEventForBot to the next
  (exact);
- the points the enemies scored off it, rebuilt from its ticks with the server's scoring rules (REFERENCE.md
  section 8): bullet damage it took (x1), turns it was rammed (1.2 each), the kill bonus (0.2 x that damage)
  when it died, and when it died the survival (50) and last-survivor (10) points the winner of a 1v1 round
  earns.

score share over a window = sum(own) / sum(own + enemies'), in [0, 1]; 0.5 means even, and a window with no
points at all counts as 0.5. The window is the last `best_window` rounds (default 10) against that opponent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

SCORE_KIND = "play_score_share"
RAM_POINTS_PER_TURN = 1.2  # 2.0 x 0.6 damage per ram turn
KILL_BONUS = 0.2
SURVIVAL_POINTS = 50.0
LAST_SURVIVOR_POINTS = 10.0


@dataclass
class RoundTally:
    """What the realtime thread counts during one round (plain numbers, cheap to update per tick)."""

    damage_taken: float = 0.0
    rammed_turns: int = 0
    died: bool = False

    def enemy_points(self) -> float:
        points = self.damage_taken + RAM_POINTS_PER_TURN * self.rammed_turns
        if self.died:
            points += KILL_BONUS * self.damage_taken + SURVIVAL_POINTS + LAST_SURVIVOR_POINTS
        return points


def score_share(pairs: Iterable[tuple[float, float]]) -> float:
    """sum(own) / sum(own + enemy) over (own, enemy) round pairs; 0.5 when nobody scored."""
    own = enemy = 0.0
    for mine, theirs in pairs:
        own += max(0.0, mine)
        enemy += max(0.0, theirs)
    total = own + enemy
    return 0.5 if total <= 0.0 else own / total


class ShareWindow:
    """The last `size` (own, enemy) round scores against one opponent; `full` once it holds `size` rounds.

    `kind` names where the scores come from (`sacbot play`'s rebuilt ones by default; train-fast's exact
    engine scores are `fast_score_share`), so the gate never compares the two.
    """

    def __init__(
        self, size: int, history: Iterable[tuple[float, float]] = (), kind: str = SCORE_KIND
    ) -> None:
        self.size = size
        self.kind = kind
        self._rounds: deque[tuple[float, float]] = deque(history, maxlen=size)

    def add(self, own: float, enemy: float) -> None:
        self._rounds.append((own, enemy))

    @property
    def full(self) -> bool:
        return len(self._rounds) >= self.size

    def __len__(self) -> int:
        return len(self._rounds)

    def share(self) -> float:
        return score_share(self._rounds)

    def score_kind(self) -> str:
        """What the score measures, for the gate (it only compares scores of the same kind)."""
        return f"{self.kind}_last_{self.size}"
