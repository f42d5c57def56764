"""`ClassicBot`'s per-tick machinery on hand-made ticks: shots, handler priorities, late round starts."""

from __future__ import annotations

from typing import TypeVar

from sacbot.opponents import make_opponent
from sacbot.opponents.base import ClassicBot
from sacbot.opponents.dispatch import PRIORITY_HIT_BY_BULLET, Script
from sacbot.protocol import (
    BotState,
    BulletFiredEvent,
    BulletHitBotEvent,
    BulletState,
    Event,
    RoundStartedEvent,
    ScannedBotEvent,
    TickEventForBot,
)


def tick(turn: int, events: list[Event] | None = None, *, x: float = 100.0, heat: float = 0.0,
         gun: float = 0.0, round_number: int = 1) -> TickEventForBot:  # fmt: skip
    state = BotState(
        energy=100.0, x=x, y=100.0, direction=0.0, gun_direction=gun, radar_direction=gun, radar_sweep=0.0,
        speed=0.0, turn_rate=0.0, gun_turn_rate=0.0, radar_turn_rate=0.0, gun_heat=heat, enemy_count=1,
    )  # fmt: skip
    return TickEventForBot(turn_number=turn, round_number=round_number, bot_state=state, bullet_states=[],
                           events=events or [])  # fmt: skip


def scan(turn: int, x: float = 300.0) -> ScannedBotEvent:
    return ScannedBotEvent(
        turn_number=turn, scanned_by_bot_id=1, scanned_bot_id=2, energy=100.0, x=x, y=100.0, direction=0.0,
        speed=0.0,
    )  # fmt: skip


def bullet(owner: int) -> BulletState:
    return BulletState(bullet_id=1, owner_id=owner, power=1.0, x=0.0, y=0.0, direction=90.0)


BotT = TypeVar("BotT", bound=ClassicBot)


def started(bot: BotT) -> BotT:
    bot.my_id = 1
    bot.on_round_started(RoundStartedEvent(round_number=1))
    return bot


def test_a_shot_request_stays_until_its_bullet_is_fired() -> None:
    spin = started(make_opponent("SpinBot"))
    assert spin.on_tick(tick(1, heat=1.0)).firepower == 0.0
    assert spin.on_tick(tick(2, [scan(2)], heat=1.0)).firepower == 0.0  # refused while the gun is hot
    assert spin.on_tick(tick(3, [scan(3)])).firepower == 3.0
    assert spin.on_tick(tick(4)).firepower == 3.0  # not fired yet: asked again, as the official libraries do
    fired = BulletFiredEvent(turn_number=5, bullet=bullet(1))
    assert spin.on_tick(tick(5, [fired], heat=1.6)).firepower == 0.0


class Dodger(ClassicBot):
    """Turns its gun forever; when hit it drives 50 (a blocking move inside a handler)."""

    def __init__(self) -> None:
        super().__init__()
        self.scans = 0

    def run(self) -> Script:
        while True:
            yield from self.turn_gun_left(10)

    def on_scanned_bot(self, e: ScannedBotEvent) -> None:
        self.scans += 1

    def on_hit_by_bullet(self, e: BulletHitBotEvent) -> None:
        self.interrupt(self.forward(50), PRIORITY_HIT_BY_BULLET)


def test_a_blocking_handler_holds_lower_events_and_the_main_loop() -> None:
    bot = started(Dodger())
    assert bot.on_tick(tick(1)).gun_turn_rate == 10.0
    hit = BulletHitBotEvent(turn_number=2, victim_id=1, bullet=bullet(2), damage=4.0, energy=96.0)
    intent = bot.on_tick(tick(2, [hit, scan(2)], gun=10.0))
    assert intent.target_speed == 1.0  # driving off (accelerating by at most 1)
    assert bot.scans == 0  # the scan (priority 20) waits behind the hit handler (50) and expires
    x, turn = 101.0, 3
    while True:
        scans_before = bot.scans
        intent = bot.on_tick(tick(turn, [scan(turn)], x=x, gun=10.0))
        if intent.gun_turn_rate != 0.0:
            break  # run() goes on: only once the handler's move is done
        assert bot.scans == 0  # scans wait behind the handler, and expire with their turn
        assert intent.target_speed is not None
        x, turn = x + intent.target_speed, turn + 1
    assert x == 150.0 and bot.motion.distance == 0.0  # the move ended where it should, then run() resumed
    assert scans_before == 0 and bot.scans == 1  # that turn's scan was handled as soon as the handler ended


def test_a_round_start_that_arrives_after_the_first_tick_does_not_restart_the_bot() -> None:
    bot = started(make_opponent("MyFirstBot"))
    bot.on_tick(tick(1))
    bot.on_tick(tick(2, x=101.0))
    assert bot.motion.distance is not None and bot.motion.distance < 100.0
    next_round_tick = tick(1, x=500.0, round_number=2)
    bot.on_tick(next_round_tick)  # round 2's tick overtook its RoundStartedEvent
    assert bot.round_number == 2 and bot.motion.distance == 100.0
    bot.on_tick(tick(2, x=501.0, round_number=2))
    bot.on_round_started(RoundStartedEvent(round_number=2))  # late: ignored
    assert bot.motion.distance == 99.0
