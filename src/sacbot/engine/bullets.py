"""Bullet flight (`IBullet.calcPosition`) and bullet-wall hits (`checkAndHandleBulletWallCollisions`).

A bullet's position is always computed from its start: start + cos/sin(direction) * (speed * tick), never by
adding steps, exactly as the server does it, so positions agree to the last bit.
"""

from __future__ import annotations

from sacbot.engine import events as ev
from sacbot.engine.state import Bullet


def advance(bullets: list[Bullet]) -> None:
    """tick += 1; also caches the next position, the far end of this turn's look-ahead segment."""
    for b in bullets:
        tick = b.tick + 1
        b.tick = tick
        distance = b.speed * tick
        b.x = b.start_x + b.cos * distance
        b.y = b.start_y + b.sin * distance
        distance = b.speed * (tick + 1)
        b.next_x = b.start_x + b.cos * distance
        b.next_y = b.start_y + b.sin * distance


def remove_wall_hits(
    bullets: list[Bullet], width: float, height: float, events: ev.TurnEvents
) -> list[Bullet]:
    """Bullets whose current position is on or outside the arena edge are gone; their owners are told."""
    kept = []
    for b in bullets:
        x = b.x
        y = b.y
        if x <= 0 or y <= 0 or x >= width or y >= height:
            event = (ev.BULLET_HIT_WALL, b.snapshot())
            events.private(b.owner_id, event)
            events.observer.append(event)
        else:
            kept.append(b)
    return kept
