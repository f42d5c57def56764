"""Fixtures of the engine tests: small scenes with bots placed by hand after turn 1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sacbot.engine import Game, Participant, game_setup_for


def _scene(
    *bots: tuple[float, float, float],
    game_type: str = "custom",
    width: int = 800,
    height: int = 600,
    rounds: int = 1,
    teams: tuple[int | None, ...] | None = None,
    **setup: Any,
) -> Game:
    participants = [
        Participant(i + 1, f"Bot{i + 1}", team_id=(teams[i] if teams else None)) for i in range(len(bots))
    ]
    game = Game(
        game_setup_for(game_type, arena_width=width, arena_height=height, number_of_rounds=rounds,
                       min_number_of_participants=1, **setup),
        participants,
        seed=1,
    )  # fmt: skip
    game.start_round()
    game.turn({})
    for bot_id, (x, y, direction) in enumerate(bots, start=1):
        bot = game.bot(bot_id)
        bot.x, bot.y = x, y
        bot.direction = bot.gun_direction = bot.radar_direction = direction
    return game


def _kinds(game: Game, bot_id: int) -> list[str]:
    return [type(e).__name__ for e in game.tick_for_bot(bot_id).events]


@pytest.fixture(scope="session")
def scene() -> Callable[..., Game]:
    """`scene(*bots, game_type="custom", width=800, height=600, rounds=1, teams=None, **setup)`: a game whose
    round 1 has run its turn 1 (no intents), with bots then moved to (x, y, direction).

    Body, gun and radar share the direction; speed 0, energy 100, gun heat 2.9 (one cooling done).
    """
    return _scene


@pytest.fixture(scope="session")
def kinds() -> Callable[[Game, int], list[str]]:
    """`kinds(game, bot_id)`: wire types of the events a bot gets for the last turn."""
    return _kinds
