"""The direct wire dicts of ticks (`tick_for_bot_dict`, `tick_for_observer_dict`, used by the arena on every
turn) give exactly the JSON text of the protocol-object path, over games that produce every kind of event."""

from __future__ import annotations

from collections import Counter

from sacbot.engine import Game, Participant, game_setup_for
from sacbot.engine.scripted import POLICIES
from sacbot.engine.state import Intent
from sacbot.protocol import encode, encode_dict_bytes


def _colored(intent: Intent, bot_id: int) -> Intent:
    # Some bots paint themselves, so the optional color fields appear in the views too.
    if bot_id % 2 == 0:
        intent.body_color = "#F00"
        intent.bullet_color = "#00FF00"
    if bot_id % 3 == 0:
        intent.std_out = "hello"
    return intent


def _play_and_compare(game: Game, policies: list[str]) -> Counter[str]:
    seen: Counter[str] = Counter()
    while not game.game_over:
        game.start_round()
        game.turn({})
        while True:
            for bot_id in game.tick_bot_ids():
                slow = encode(game.tick_for_bot(bot_id))
                assert encode_dict_bytes(game.tick_for_bot_dict(bot_id), "TickEventForBot").decode() == slow
            slow = encode(game.tick_for_observer())
            assert encode_dict_bytes(game.tick_for_observer_dict(), "TickEventForObserver").decode() == slow
            seen.update(type(e).__name__ for e in game.tick_for_observer().events)
            for bot_id in game.tick_bot_ids():
                seen.update(type(e).__name__ for e in game.tick_for_bot(bot_id).events)
            if game.round_over:
                break
            intents = {
                i: _colored(POLICIES[policies[(i - 1) % len(policies)]](game, i), i) for i in game.alive_ids
            }
            game.turn(intents)
    return seen


def test_direct_tick_dicts_match_the_protocol_objects_in_a_melee() -> None:
    names = sorted(POLICIES)
    parts = [Participant(i, f"Bot{i}", session_id=f"s{i}", version="2.0") for i in range(1, 9)]
    setup = game_setup_for(
        "custom", arena_width=400, arena_height=400, number_of_rounds=2, min_number_of_participants=1
    )
    seen = _play_and_compare(Game(setup, parts, seed=3), names)
    # The games must have exercised the event kinds the direct path builds itself and the fallback ones.
    for kind in ("ScannedBotEvent", "BulletFiredEvent", "BulletHitWallEvent", "BotHitWallEvent",
                 "BulletHitBotEvent", "BotHitBotEvent", "BotDeathEvent", "WonRoundEvent"):  # fmt: skip
        assert seen[kind] > 0, kind


def test_direct_tick_dicts_match_in_a_team_game() -> None:
    parts = [Participant(i, f"Bot{i}", team_id=1 + i % 2, session_id=f"t{i}") for i in range(1, 5)]
    setup = game_setup_for("custom", number_of_rounds=1, min_number_of_participants=1)
    _play_and_compare(Game(setup, parts, seed=5), sorted(POLICIES))
