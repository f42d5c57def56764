"""The sans-I/O session, message by message (no sockets)."""

from __future__ import annotations

from typing import Any

import pytest

from sacbot.client import BotIdentity, BotSession, Phase, check_server_version, complete_intent
from sacbot.errors import UserError
from sacbot.protocol import (
    BotHandshake,
    BotIntent,
    BotReady,
    BotState,
    GameAbortedEvent,
    GameSetup,
    GameStartedEventForBot,
    RoundStartedEvent,
    ServerHandshake,
    TickEventForBot,
)


class Policy:
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_game_started(self, event: Any) -> None:
        self.events.append("game")

    def on_round_started(self, event: Any) -> None:
        self.events.append(f"round{event.round_number}")

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        self.events.append(f"tick{tick.round_number}.{tick.turn_number}")
        return BotIntent(target_speed=8.0)

    def on_round_ended(self, event: Any) -> None:
        self.events.append("end")

    def on_game_ended(self, event: Any) -> None:
        self.events.append("over")

    def on_game_aborted(self) -> None:
        self.events.append("aborted")


def _tick(rnd: int, turn: int) -> TickEventForBot:
    state = BotState(
        energy=1.0,
        x=1.0,
        y=1.0,
        direction=0.0,
        gun_direction=0.0,
        radar_direction=0.0,
        radar_sweep=0.0,
        speed=0.0,
        turn_rate=0.0,
        gun_turn_rate=0.0,
        radar_turn_rate=0.0,
        gun_heat=0.0,
        enemy_count=1,
    )
    return TickEventForBot(turn_number=turn, round_number=rnd, bot_state=state, bullet_states=[], events=[])


def _started(policy: Policy) -> BotSession:
    session = BotSession(policy, BotIdentity(name="B", version="1", authors=["A"]), secret="x")
    hs = session.receive(
        ServerHandshake(session_id="s1", variant="Tank Royale", version="1.1.0", game_types=["1v1"])
    )
    assert isinstance(hs, BotHandshake) and hs.session_id == "s1" and hs.secret == "x"
    setup: Any = GameSetup.__new__(GameSetup)  # contents do not matter to the session
    assert isinstance(session.receive(GameStartedEventForBot(my_id=2, game_setup=setup)), BotReady)
    return session


def test_ticks_before_a_game_or_out_of_order_get_no_intent() -> None:
    policy = Policy()
    session = BotSession(policy, BotIdentity(name="B", version="1", authors=["A"]))
    assert session.receive(_tick(1, 1)) is None  # no game yet
    session = _started(policy)
    assert session.phase is Phase.GAME
    assert isinstance(session.receive(_tick(1, 1)), BotIntent)  # starts round 1 by its number
    assert session.receive(RoundStartedEvent(round_number=1)) is None  # late: no second round start
    assert session.receive(_tick(1, 1)) is None  # duplicate
    assert isinstance(session.receive(_tick(1, 3)), BotIntent)
    assert session.receive(_tick(1, 2)) is None  # overtaken
    assert policy.events == ["game", "round1", "tick1.1", "tick1.3"]


def test_game_aborted_ends_the_session() -> None:
    policy = Policy()
    session = _started(policy)
    session.receive(GameAbortedEvent())
    assert session.finished and session.aborted and policy.events[-1] == "aborted"
    assert session.receive(_tick(1, 1)) is None


def test_complete_intent_fills_the_server_defaults_and_keeps_what_is_set() -> None:
    full = complete_intent(BotIntent(turn_rate=3.0, rescan=True, body_color="#F00"))
    assert (full.turn_rate, full.gun_turn_rate, full.target_speed, full.firepower) == (3.0, 0.0, 0.0, 0.0)
    assert full.rescan is True and full.fire_assist is True and full.adjust_gun_for_body_turn is False
    assert full.body_color == "#F00"
    assert complete_intent(full) is full


@pytest.mark.parametrize("version", ["1.0.0", "1.1.0", "1.99.3-beta"])
def test_same_major_versions_are_accepted(version: str) -> None:
    check_server_version(version)


@pytest.mark.parametrize("version", ["0.30.0", "2.0.0", "garbage"])
def test_other_major_versions_are_refused(version: str) -> None:
    with pytest.raises(UserError):
        check_server_version(version)
