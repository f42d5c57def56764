"""The environment's light tick views equal the engine's full protocol ticks, field for field, every turn."""

from __future__ import annotations

from dataclasses import fields

from sacbot.engine import Game, Participant, game_setup_for
from sacbot.engine.scripted import POLICIES
from sacbot.env.ticks import tick_view
from sacbot.protocol import BotState


def assert_view_equals_tick(game: Game, bot_id: int) -> None:
    tick = game.tick_for_bot(bot_id)
    view = tick_view(game, bot_id)
    assert view.type == tick.type
    assert (view.turn_number, view.round_number) == (tick.turn_number, tick.round_number)
    for f in fields(BotState):
        assert getattr(view.bot_state, f.name) == getattr(tick.bot_state, f.name), f.name
    assert view.events == tick.events
    mates = game.teammate_ids(bot_id)
    assert view.bot_state.enemy_count == sum(1 for b in game.alive_ids if b != bot_id and b not in mates)
    assert view.bullet_states == tick.bullet_states


def play_and_compare(game: Game, names: list[str], rounds: int) -> dict[str, int]:
    """Plays rounds of scripted policies, comparing every bot's view each turn; counts what happened."""
    seen = {"events": 0, "bullets": 0, "deaths": 0, "colors": 0}
    for _ in range(rounds):
        game.start_round()
        game.turn({})
        while True:
            for bot_id in game.tick_bot_ids():
                assert_view_equals_tick(game, bot_id)
                view = tick_view(game, bot_id)
                seen["events"] += len(view.events)
                seen["bullets"] += len(view.bullet_states)
                seen["deaths"] += sum(e.type == "BotDeathEvent" for e in view.events)
                seen["colors"] += view.bot_state.body_color is not None
            if game.round_over:
                break
            intents = {}
            for bot_id in game.alive_ids:
                intent = POLICIES[names[bot_id - 1]](game, bot_id)
                if bot_id == 1:
                    intent.body_color = "#FF0000"
                intents[bot_id] = intent
            game.turn(intents)
    return seen


def test_views_equal_ticks_in_a_1v1() -> None:
    game = Game(game_setup_for("1v1", number_of_rounds=2), [Participant(1, "A"), Participant(2, "B")], seed=4)
    seen = play_and_compare(game, ["tracker", "rammer"], rounds=2)
    assert seen["events"] > 50 and seen["bullets"] > 50 and seen["deaths"] >= 2 and seen["colors"] > 0


def test_views_equal_ticks_in_a_team_melee() -> None:
    # Teams take enemy_count's general path (teammates are not enemies).
    names = ["tracker", "spinner", "rammer", "wall_runner", "tracker", "rammer"]
    parts = [Participant(i + 1, f"Bot{i + 1}", team_id=1 + i % 2 if i < 4 else None) for i in range(6)]
    game = Game(game_setup_for("melee", number_of_rounds=1, min_number_of_participants=2), parts, seed=2)
    seen = play_and_compare(game, names, rounds=1)
    assert seen["events"] > 50 and seen["deaths"] >= 1
