"""`sacbot play`'s debug graphics: what the bot remembers and intends, as the SVG of an intent's
`debugGraphics` (battlefield units, y up, as the official Bot APIs write it; REFERENCE.md, BotIntent).

The realtime policy paints only on ticks whose bot state says the server lets this bot debug
(`isDebuggingEnabled`), so without debugging this module costs nothing. A paint is one f-string of a few
hundred characters:
- the enemy where the bot last scanned it (a ring; faded once the scan is older than a few turns);
- the gun's aim point: the point along the gun direction at the remembered enemy's distance, and the line
  to it;
- the action as a small bar chart beside the tank: body turn, speed, gun turn, fire (up = positive).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sacbot.agent.features import RoundMemory

HEADER = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 5000 5000">'
ENEMY_COLOR = "#ff5050"
AIM_COLOR = "#ffd040"
BAR_UP = "#50d070"
BAR_DOWN = "#e07040"
FRESH_TURNS = 3  # a scan this many turns old is still drawn solid
BAR_W = 5.0
BAR_GAP = 2.0
BAR_H = 20.0  # the height of a bar at |value| = 1
BAR_OFFSET = (28.0, -28.0)  # the chart's baseline start, from the tank's centre


def _bars(x: float, y: float, action: Sequence[float]) -> str:
    parts = []
    x0, y0 = x + BAR_OFFSET[0], y + BAR_OFFSET[1]
    for i in range(4):
        v = float(action[i])
        v = -1.0 if v < -1.0 else (1.0 if v > 1.0 else v)
        h = abs(v) * BAR_H
        bx = x0 + i * (BAR_W + BAR_GAP)
        by = y0 if v >= 0.0 else y0 - h
        color = BAR_UP if v >= 0.0 else BAR_DOWN
        parts.append(f'<rect x="{bx:.1f}" y="{by:.1f}" width="{BAR_W:g}" height="{h:.1f}" fill="{color}"/>')
    width = 4 * BAR_W + 3 * BAR_GAP
    parts.append(
        f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x0 + width:.1f}" y2="{y0:.1f}" stroke="#ffffff" '
        'stroke-width="1"/>'
    )
    return "".join(parts)


def paint(memory: RoundMemory, bot_state: Any, action: Sequence[float]) -> str:
    """The SVG for one tick: `memory` after this tick's update, the tick's own bot state and the action in
    [-1, 1]^4 the intent was made from."""
    x, y = float(bot_state.x), float(bot_state.y)
    body = _bars(x, y, action)
    if memory.seen:
        ex, ey = memory.enemy_x, memory.enemy_y
        opacity = 1.0 if memory.turn - memory.last_scan_turn <= FRESH_TURNS else 0.4
        distance = math.hypot(ex - x, ey - y)
        gun = math.radians(bot_state.gun_direction)
        ax, ay = x + distance * math.cos(gun), y + distance * math.sin(gun)
        body = (
            f'<circle cx="{ex:.1f}" cy="{ey:.1f}" r="22" fill="none" stroke="{ENEMY_COLOR}" stroke-width="2" '
            f'opacity="{opacity:g}"/>'
            f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{ax:.1f}" y2="{ay:.1f}" stroke="{AIM_COLOR}" '
            'stroke-width="1" stroke-dasharray="6 4"/>'
            f'<circle cx="{ax:.1f}" cy="{ay:.1f}" r="4" fill="{AIM_COLOR}"/>' + body
        )
    return f"{HEADER}{body}</svg>"
