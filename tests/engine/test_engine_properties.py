"""Invariants over random games (hypothesis): positions, energy, bullet ids, score sums."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sacbot.engine import Game, Intent, Participant, game_setup_for
from sacbot.engine import events as ev


def _random_intent(rng: random.Random) -> Intent:
    return Intent(
        target_speed=rng.choice([8.0, -8.0, 0.0, rng.uniform(-10, 10)]),
        turn_rate=rng.uniform(-12, 12),
        gun_turn_rate=rng.uniform(-25, 25),
        radar_turn_rate=rng.choice([0.0, 45.0, -45.0, rng.uniform(-50, 50)]),
        firepower=rng.choice([0.0, 0.1, 1.0, 3.0, 5.0, rng.uniform(0, 3)]),
        adjust_gun_for_body_turn=rng.random() < 0.3,
        adjust_radar_for_gun_turn=rng.random() < 0.3,
        rescan=rng.random() < 0.1,
        fire_assist=rng.random() < 0.5,
    )


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**32 - 1),
    bots=st.integers(2, 6),
    width=st.integers(400, 900),
    height=st.integers(400, 900),
)
def test_invariants_hold_in_random_games(seed: int, bots: int, width: int, height: int) -> None:
    rng = random.Random(seed)
    setup = game_setup_for(
        "custom", arena_width=width, arena_height=height, number_of_rounds=2, max_inactivity_turns=60
    )
    game = Game(setup, [Participant(i, f"B{i}") for i in range(1, bots + 1)], seed=seed)
    round_sums: dict[int, float] = {i: 0.0 for i in range(1, bots + 1)}
    while not game.game_over:
        game.start_round()
        fired_ids: set[int] = set()
        while not game.round_over:
            before = {i: game.bot(i).energy for i in game.alive_ids}
            intents = {i: _random_intent(rng) for i in game.alive_ids if rng.random() < 0.8}
            if game.turn_number >= 250:  # end long rounds: leave one bot
                for i in game.alive_ids[1:]:
                    game.bot(i).energy = -1.0
            game.turn(intents)
            for i in game.tick_bot_ids():
                bot = game.bot(i)
                assert 18.0 <= bot.x <= width - 18.0 and 18.0 <= bot.y <= height - 18.0
                gained = sum(
                    3 * e[1][2] for e in game.events_for(i) if e[0] == ev.BULLET_HIT_BOT and e[1][1] == i
                )
                assert bot.energy <= before[i] + gained + 1e-9
                for e in game.events_for(i):
                    if e[0] == ev.BULLET_FIRED:
                        assert e[1][0] not in fired_ids
                        fired_ids.add(e[1][0])
            ids = [b.bullet_id for b in game.bullets]
            assert len(ids) == len(set(ids))
        for i, s in game.round_scores().items():
            round_sums[i] += s.total
    accumulated = game.accumulated_scores()
    for i in round_sums:
        assert accumulated[i].total == pytest.approx(round_sums[i])
    results = game.results_for_observer()
    assert sum(r.first_places for r in results) >= 2  # at least one winner per round
