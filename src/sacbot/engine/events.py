"""Events of one turn, per recipient, and the protocol views built from them on demand.

During a turn the engine records each event once as a small tuple (kind first) in `TurnEvents`: per bot for
the bots that receive it, and in one list for observers. `tick_for_bot` / `tick_for_observer` turn them into
`sacbot.protocol` objects only when asked, so in-process training pays nothing for views it never reads.
"""

from __future__ import annotations

from typing import Any

from sacbot import protocol as p

# Event kinds; tuple layouts (after the kind) in the comments. A bullet is a snapshot tuple:
# (bullet_id, owner_id, power, x, y, direction, color).
SCANNED = 0  # scanner_id, scanned_id, energy, x, y, direction, speed
BULLET_FIRED = 1  # bullet
BULLET_HIT_BOT = 2  # bullet, victim_id, damage, victim energy after
BULLET_HIT_BULLET = 3  # bullet, hit_bullet
BULLET_HIT_WALL = 4  # bullet
BOT_HIT_WALL = 5  # victim_id
BOT_HIT_BOT = 6  # bot_id (receiver), victim_id (other bot), energy, x, y (of the other), rammed
BOT_DEATH = 7  # victim_id
WON_ROUND = 8  #
TEAM_MESSAGE = 9  # message, message_type, sender_id


class TurnEvents:
    """The events of the last processed turn: `by_bot[id]` for each bot, `observer` for observers."""

    __slots__ = ("by_bot", "observer", "private_only")

    def __init__(self, bot_ids: list[int]) -> None:
        self.by_bot: dict[int, list[tuple[Any, ...]]] = {bot_id: [] for bot_id in bot_ids}
        self.observer: list[tuple[Any, ...]] = []
        # Set when an event went to bots only (team messages, won round); clear() must then look at every bot.
        self.private_only = False

    def clear(self) -> None:
        if self.observer or self.private_only:  # other bot events are also recorded for observers
            for events in self.by_bot.values():
                events.clear()
            self.observer.clear()
            self.private_only = False

    def private(self, bot_id: int, event: tuple[Any, ...]) -> None:
        events = self.by_bot.get(bot_id)
        if events is not None:
            events.append(event)


def bullet_state(snap: tuple[Any, ...]) -> p.BulletState:
    return p.BulletState(
        bullet_id=snap[0],
        owner_id=snap[1],
        power=snap[2],
        x=snap[3],
        y=snap[4],
        direction=snap[5],
        color=snap[6],
    )


def to_protocol(event: tuple[Any, ...], turn: int) -> p.Event:
    """One engine event tuple as its `sacbot.protocol` event."""
    kind = event[0]
    if kind == SCANNED:
        return p.ScannedBotEvent(
            turn_number=turn,
            scanned_by_bot_id=event[1],
            scanned_bot_id=event[2],
            energy=event[3],
            x=event[4],
            y=event[5],
            direction=event[6],
            speed=event[7],
        )
    if kind == BULLET_FIRED:
        return p.BulletFiredEvent(turn_number=turn, bullet=bullet_state(event[1]))
    if kind == BULLET_HIT_BOT:
        return p.BulletHitBotEvent(
            turn_number=turn,
            bullet=bullet_state(event[1]),
            victim_id=event[2],
            damage=event[3],
            energy=event[4],
        )
    if kind == BULLET_HIT_BULLET:
        return p.BulletHitBulletEvent(
            turn_number=turn, bullet=bullet_state(event[1]), hit_bullet=bullet_state(event[2])
        )
    if kind == BULLET_HIT_WALL:
        return p.BulletHitWallEvent(turn_number=turn, bullet=bullet_state(event[1]))
    if kind == BOT_HIT_WALL:
        return p.BotHitWallEvent(turn_number=turn, victim_id=event[1])
    if kind == BOT_HIT_BOT:
        return p.BotHitBotEvent(
            turn_number=turn,
            bot_id=event[1],
            victim_id=event[2],
            energy=event[3],
            x=event[4],
            y=event[5],
            rammed=event[6],
        )
    if kind == BOT_DEATH:
        return p.BotDeathEvent(turn_number=turn, victim_id=event[1])
    if kind == WON_ROUND:
        return p.WonRoundEvent(turn_number=turn)
    if kind == TEAM_MESSAGE:
        return p.TeamMessageEvent(
            turn_number=turn, message=event[1], message_type=event[2], sender_id=event[3]
        )
    raise ValueError(f"unknown engine event kind {kind}")
