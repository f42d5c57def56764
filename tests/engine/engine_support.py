"""Whole seeded games between scripted policies, summarised for the golden test; the server's sector test.

`python tests/engine/engine_support.py` rewrites tests/engine/golden_games.json; do that only when a rule
change is intended (and say so in the commit). The summary includes a hash of every turn's rounded state,
so any change to the rules shows up.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

from sacbot.engine import Game, Participant, game_setup_for
from sacbot.engine import events as ev
from sacbot.engine.geometry import is_line_intersecting_circle
from sacbot.engine.rules import DEG_TO_RAD
from sacbot.engine.scripted import POLICIES
from sacbot.protocol import to_dict

GOLDEN = Path(__file__).with_name("golden_games.json")

# (name, game type, rounds, seed, policies, team ids)
GAMES: list[tuple[str, str, int, int, list[str], list[int | None] | None]] = [
    ("1v1 tracker-spinner", "1v1", 2, 1, ["tracker", "spinner"], None),
    ("1v1 rammer-wall_runner", "1v1", 2, 2, ["rammer", "wall_runner"], None),
    ("melee mixed", "melee", 1, 3, ["tracker", "spinner", "rammer", "wall_runner", "tracker", "spinner",
                                    "rammer", "wall_runner", "tracker", "rammer"], None),
    ("twinduel teams", "twinduel", 2, 4, ["tracker", "rammer", "spinner", "wall_runner"], [1, 1, 2, 2]),
]  # fmt: skip

_KIND_NAMES = {
    ev.SCANNED: "scanned",
    ev.BULLET_FIRED: "fired",
    ev.BULLET_HIT_BOT: "hit_bot",
    ev.BULLET_HIT_BULLET: "hit_bullet",
    ev.BULLET_HIT_WALL: "hit_wall",
    ev.BOT_HIT_WALL: "bot_wall",
    ev.BOT_HIT_BOT: "bot_bot",
    ev.BOT_DEATH: "death",
}


def play(game_type: str, rounds: int, seed: int, policies: list[str], teams: list[int | None] | None) -> Any:
    participants = [
        Participant(i + 1, f"{name}{i + 1}", team_id=teams[i] if teams else None)
        for i, name in enumerate(policies)
    ]
    game = Game(game_setup_for(game_type, number_of_rounds=rounds), participants, seed=seed)
    summary: list[dict[str, Any]] = []
    while not game.game_over:
        game.start_round()
        digest = hashlib.sha256()
        counts: dict[str, int] = {}
        while not game.round_over:
            intents = {i: POLICIES[policies[i - 1]](game, i) for i in game.alive_ids}
            game.turn(intents)
            for i in game.tick_bot_ids():
                b = game.bot(i)
                digest.update(
                    f"{i}:{b.x:.6f},{b.y:.6f},{b.direction:.6f},{b.energy:.6f},{b.gun_heat:.6f};".encode()
                )
            for e in game.observer_events():
                name = _KIND_NAMES[e[0]]
                counts[name] = counts.get(name, 0) + 1
        summary.append(
            {
                "round": game.round_number,
                "turns": game.turn_number,
                "winners": game.winner_ids,
                "survivors": game.alive_ids,
                "energies": {str(i): round(game.bot(i).energy, 6) for i in game.bot_ids},
                "event_counts": dict(sorted(counts.items())),
                "state_sha256": digest.hexdigest(),
            }
        )
    return {"rounds": summary, "results": [to_dict(r) for r in game.results_for_observer()]}


def summarise() -> dict[str, Any]:
    return {
        name: play(gt, rounds, seed, policies, teams) for name, gt, rounds, seed, policies, teams in GAMES
    }


def is_circle_intersecting_sector(
    cx: float,
    cy: float,
    circle_radius: float,
    sx: float,
    sy: float,
    sector_radius: float,
    start_deg: float,
    end_deg: float,
) -> bool:
    """The server's `isCircleIntersectingSector` (`model/math.kt`), ported as written: circle inside or
    touching the sector swept counter-clockwise from start_deg to end_deg. `sacbot.engine.scans` inlines it
    (the arms once per scanner); the scan tests check the two agree."""
    vx = cx - sx
    vy = cy - sy
    reach = sector_radius + circle_radius
    if vx * vx + vy * vy > reach * reach:
        return False
    a0 = start_deg * DEG_TO_RAD
    a1 = end_deg * DEG_TO_RAD
    x0 = math.cos(a0) * sector_radius
    y0 = math.sin(a0) * sector_radius
    x1 = math.cos(a1) * sector_radius
    y1 = math.sin(a1) * sector_radius
    # Between the arms: not clockwise of the start arm, clockwise of the end arm
    # (isClockwise: v1x*v2y <= v1y*v2x).
    if not (x0 * vy <= y0 * vx) and (x1 * vy <= y1 * vx):
        return True
    return is_line_intersecting_circle(sx, sy, sx + x0, sy + y0, cx, cy, circle_radius) or (
        is_line_intersecting_circle(sx, sy, sx + x1, sy + y1, cx, cy, circle_radius)
    )


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(summarise(), indent=1, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {GOLDEN}\n")
