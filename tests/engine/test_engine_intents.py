"""How intents merge (GameServer.handleBotIntent, BotIntentMapper) and when they count."""

from __future__ import annotations

from collections.abc import Callable

from sacbot.engine import Game, Intent, game_setup_for, merge_intents
from sacbot.protocol import BotIntent


def test_turn_one_has_no_intents() -> None:
    game = Game(game_setup_for("1v1"), [(1, "A"), (2, "B")], seed=2)
    game.start_round()
    x, y, d = game.start_position(1)
    game.turn({1: Intent(target_speed=8.0, turn_rate=10.0), 2: Intent(rescan=True)})
    bot = game.bot(1)
    assert (bot.x, bot.y, bot.direction, bot.speed) == (x, y, d, 0.0)
    assert bot.intent is None
    assert game.tick_for_bot(2).events == []  # no scan either
    assert bot.gun_heat == 2.9
    game.turn({1: Intent(target_speed=8.0)})
    assert bot.speed == 1.0


def test_omitted_fields_reset_on_a_new_intent(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    game.turn({1: BotIntent(target_speed=5.0, turn_rate=3.0, fire_assist=False, rescan=True)})
    game.turn({1: BotIntent(turn_rate=2.0)})  # target_speed omitted -> 0.0: the bot stops at once
    intent = game.bot(1).intent
    assert intent is not None
    assert intent.target_speed == 0.0 and intent.turn_rate == 2.0
    assert intent.fire_assist is True and intent.rescan is False
    assert game.bot(1).speed == 0.0


def test_no_intent_repeats_the_last_one(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    game.turn({1: Intent(target_speed=8.0, turn_rate=1.0)})
    game.turn({})
    game.turn({2: Intent()})
    bot = game.bot(1)
    assert bot.speed == 3.0
    assert bot.direction == 3.0


def test_colors_are_sticky_and_a_blank_clears_them(scene: Callable[..., Game]) -> None:
    game = scene((400.0, 300.0, 0.0), (100.0, 100.0, 0.0))
    game.turn({1: BotIntent(body_color="#FF0000", gun_color="#00FF00")})
    game.turn({1: BotIntent(gun_color="")})
    state = game.tick_for_bot(1).bot_state
    assert state.body_color == "#FF0000"
    assert state.gun_color is None


def test_merge_intents_first_resets_later_only_change_what_they_set() -> None:
    merged = merge_intents(
        [BotIntent(target_speed=4.0, firepower=1.0), BotIntent(turn_rate=5.0, rescan=True)]
    )
    assert (merged.target_speed, merged.firepower, merged.turn_rate, merged.rescan) == (4.0, 1.0, 5.0, True)
    assert merged.gun_turn_rate == 0.0 and merged.fire_assist is True
    merged = merge_intents([BotIntent(turn_rate=5.0), BotIntent(turn_rate=None, fire_assist=False)])
    assert merged.turn_rate == 5.0 and merged.fire_assist is False


def test_intents_are_cleared_at_round_start() -> None:
    game = Game(game_setup_for("custom", number_of_rounds=2), [(1, "A"), (2, "B")], seed=9)
    game.start_round()
    game.turn({})
    game.turn({1: Intent(target_speed=8.0)})
    game.bot(2).energy = -1.0
    game.turn({})
    assert game.round_over and not game.game_over
    game.start_round()
    game.turn({})
    game.turn({})  # nothing arrived: nothing to repeat in the new round
    assert game.bot(1).speed == 0.0 and game.bot(1).intent is None
