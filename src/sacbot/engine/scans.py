"""Radar scans (`TurnProcessor.checkAndHandleScans`).

A bot scans when its intent asks to rescan or it moved or turned anything this turn; droids never scan. The
scanned area is the sector swept from the previous to the current radar direction, radius 1200; a radar that
did not turn scans along a single 1200-long ray. Every bot in it is reported, teammates too.
"""

from __future__ import annotations

from math import cos, fmod, sin

from sacbot.engine import events as ev
from sacbot.engine.geometry import is_line_intersecting_circle
from sacbot.engine.rules import BOT_RADIUS, DEG_TO_RAD, RADAR_RADIUS
from sacbot.engine.state import Bot

# Pre-filter for the ray test, with a unit of slack so it never rejects what the exact test accepts.
_REACH2 = (RADAR_RADIUS + BOT_RADIUS + 1.0) ** 2
_SECTOR_REACH2 = (RADAR_RADIUS + BOT_RADIUS) * (RADAR_RADIUS + BOT_RADIUS)  # exact, as the server
_ARM_SLACK = (BOT_RADIUS + 1.0) * RADAR_RADIUS


def is_scanning(bot: Bot) -> bool:
    intent = bot.intent
    if intent is not None and intent.rescan:
        return True
    return (
        bot.x != bot.prev_x
        or bot.y != bot.prev_y
        or bot.direction != bot.prev_direction
        or bot.gun_direction != bot.prev_gun_direction
        or bot.radar_direction != bot.prev_radar_direction
    )


def scan_angles(radar_direction: float, sweep: float) -> tuple[float, float]:
    """(start, end) of the counter-clockwise arc swept this turn."""
    if sweep >= 0:
        a = fmod(radar_direction - sweep, 360.0)
        return (a if a >= 0 else a + 360.0), radar_direction
    a = fmod(radar_direction - sweep, 360.0)  # radar + |sweep|
    return radar_direction, (a if a >= 0 else a + 360.0)


def scan_all(bots: list[Bot], events: ev.TurnEvents) -> None:
    for scanner in bots:
        if scanner.is_droid or not is_scanning(scanner):
            continue
        start, end = scan_angles(scanner.radar_direction, scanner.radar_sweep)
        sx = scanner.x
        sy = scanner.y
        if start == end:
            angle = start * DEG_TO_RAD
            ex = sx + cos(angle) * RADAR_RADIUS
            ey = sy + sin(angle) * RADAR_RADIUS
            for target in bots:
                if target is scanner:
                    continue
                dx = target.x - sx
                dy = target.y - sy
                if dx * dx + dy * dy > _REACH2:
                    continue
                if is_line_intersecting_circle(sx, sy, ex, ey, target.x, target.y, BOT_RADIUS):
                    _report(scanner, target, events)
            continue
        # The sector's arms, once per scanner (the server's isCircleIntersectingSector computes them per
        # target; its port is the scan tests' oracle, in tests/engine/engine_support.py).
        a0 = start * DEG_TO_RAD
        a1 = end * DEG_TO_RAD
        x0 = cos(a0) * RADAR_RADIUS
        y0 = sin(a0) * RADAR_RADIUS
        x1 = cos(a1) * RADAR_RADIUS
        y1 = sin(a1) * RADAR_RADIUS
        for target in bots:
            if target is scanner:
                continue
            vx = target.x - sx
            vy = target.y - sy
            if vx * vx + vy * vy > _SECTOR_REACH2:
                continue
            if not (x0 * vy <= y0 * vx) and (x1 * vy <= y1 * vx):
                _report(scanner, target, events)
                continue
            # Touching an arm needs the centre within 18 of the arm's line (|cross| / 1200 <= 18), with slack;
            # only then run the exact segment test.
            c0 = x0 * vy - y0 * vx
            if -_ARM_SLACK <= c0 <= _ARM_SLACK and is_line_intersecting_circle(
                sx, sy, sx + x0, sy + y0, target.x, target.y, BOT_RADIUS
            ):
                _report(scanner, target, events)
                continue
            c1 = x1 * vy - y1 * vx
            if -_ARM_SLACK <= c1 <= _ARM_SLACK and is_line_intersecting_circle(
                sx, sy, sx + x1, sy + y1, target.x, target.y, BOT_RADIUS
            ):
                _report(scanner, target, events)


def _report(scanner: Bot, target: Bot, events: ev.TurnEvents) -> None:
    event = (
        ev.SCANNED,
        scanner.id,
        target.id,
        target.energy,
        target.x,
        target.y,
        target.direction,
        target.speed,
    )
    events.by_bot[scanner.id].append(event)
    events.observer.append(event)
    if scanner.scan_this_turn is None:
        scanner.scan_this_turn = (target.x, target.y)
