"""Scores, places and ranks (ScoreTracker, ScoreCalculator, ResultsBuilder)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sacbot.engine import Game, Intent
from sacbot.engine.scoring import RoundScoreTracker, round_half_up


def _kill_bot3_by_bullet_then_bot2(scene: Callable[..., Game]) -> Game:
    game = scene((200.0, 300.0, 0.0), (600.0, 500.0, 0.0), (300.0, 300.0, 0.0))
    game.bot(1).gun_heat = 0.0
    game.bot(3).energy = 3.0
    game.turn({1: Intent(firepower=1.0)})
    for _ in range(3):
        game.turn({})
    return game


def test_bullet_kill_survival_and_last_survivor(
    scene: Callable[..., Game], kinds: Callable[[Game, int], list[str]]
) -> None:
    game = _kill_bot3_by_bullet_then_bot2(scene)
    assert game.alive_ids == [1, 2]  # a power-1 bullet (4 damage) killed bot 3 with 3 energy left
    assert game.bot(1).energy == 102.0  # 100 - 1 + 3*1
    assert sorted(game.tick_bot_ids()) == [1, 2, 3]  # bot 3 gets one last tick with its death
    for bot_id in (1, 2, 3):
        assert "BotDeathEvent" in kinds(game, bot_id)  # every bot alive at the start of the turn
    scores = game.round_scores()
    assert scores[1].bullet_damage == 3.0  # only the energy the victim still had
    assert scores[1].bullet_kill_bonus == pytest.approx(0.6)  # 20% of all damage dealt to bot 3
    assert scores[1].survival == 50.0 and scores[2].survival == 50.0 and scores[3].survival == 0.0
    assert not game.round_over

    game.bot(2).energy = -1.0
    game.turn({})
    assert game.round_over and game.game_over
    assert game.tick_bot_ids() == [1, 2]
    scores = game.accumulated_scores()
    assert scores[1].survival == 100.0
    assert scores[1].last_survivor_bonus == 20.0  # 10 per dead bot
    assert scores[1].total == pytest.approx(123.6)
    assert game.winner_ids == [1]
    assert "WonRoundEvent" in kinds(game, 1) and "WonRoundEvent" not in kinds(game, 2)

    results = game.results_for_observer()
    assert [(r.id, r.rank, r.total_score) for r in results] == [(1, 1, 124), (2, 2, 50), (3, 3, 0)]
    first = results[0]
    assert (first.bullet_damage, first.bullet_kill_bonus, first.survival, first.last_survivor_bonus) == (
        3,
        0,
        100,
        20,
    )
    assert (first.first_places, results[1].second_places, results[2].third_places) == (1, 1, 1)
    assert game.results_for_bot(2).rank == 2
    ended = game.round_ended_for_bot(1)
    assert ended.round_number == 1 and ended.results.total_score == 124


def test_everyone_dying_together_share_the_last_survivor_bonus() -> None:
    tracker = RoundScoreTracker([1, 2, 3])
    tracker.register_deaths([3])
    tracker.register_deaths([1, 2])
    assert tracker.score(1).last_survivor_bonus == 30.0  # deadCount = N when nobody is left
    assert tracker.score(2).last_survivor_bonus == 30.0
    assert tracker.score(1).survival == 50.0


def test_ram_kill_bonus_counts_all_damage_to_the_victim() -> None:
    tracker = RoundScoreTracker([1, 2])
    tracker.register_bullet_hit(1, 2, 10.0, killed=False)
    tracker.register_ram_hit(1, 2, killed=False)
    tracker.register_ram_hit(1, 2, killed=True)
    s = tracker.score(1)
    assert s.ram_damage == pytest.approx(2.4)
    assert s.ram_kill_bonus == pytest.approx(0.3 * (10.0 + 1.2))
    assert s.bullet_kill_bonus == 0.0


def test_shared_ranks_and_places() -> None:
    tracker = RoundScoreTracker([1, 2, 3])
    tracker.register_bullet_hit(2, 1, 5.0, killed=False)
    tracker.register_bullet_hit(3, 1, 5.0, killed=False)
    scores = tracker.round_scores()
    assert [(s.bot_id, s.rank) for s in scores] == [(2, 1), (3, 1), (1, 3)]
    assert [s.first_places for s in scores] == [1, 1, 0]
    assert scores[2].third_places == 1


def test_rounding_is_half_up() -> None:
    assert round_half_up(2.5) == 3
    assert round_half_up(3.5) == 4
    assert round_half_up(0.49) == 0
