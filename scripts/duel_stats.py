"""Who hits whom, where, in a 1v1 battle recording (docs/learning.md, "Against Surfer: where the rounds go").

    python scripts/duel_stats.py RECORDING.battle.gz [...]

For each recording (`sacbot eval --record DIR`, `sacbot arena run --record DIR`) it prints, per bot and per
100-unit band of the bots' distance when the shot left: the shots, the share that hit, their mean power and
the damage they did per shot (4 x power, plus 2 x (power - 1) above power 1). Then each bot's guess-factor
profile as the other's real shots saw it: for every bullet, where its target was when the bullet's wave
(a circle from the muzzle growing at the bullet's speed) reached it, as the angle from its bearing at the
shot, signed by the target's sideways direction then and divided by the largest angle a bot can cover
before the bullet arrives (asin(8 / bullet speed)); shares in 9 equal bins from -1 to +1. +1: it went on at
full speed; 0: it stayed on the line of fire; below 0: it turned back. A flat profile gives a statistical
gun nothing to aim at; a peaked one shows where a gun that learns it would hit. Last, each bot's aim in the
same factors: where its shots pointed, on the same waves.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter

from sacbot.engine.rules import calc_bullet_damage, calc_bullet_speed
from sacbot.errors import UserError
from sacbot.opponents.motion import direction_to
from sacbot.opponents.waves import Wave
from sacbot.viewer.reader import read_recording

BANDS = 8  # 100-unit distance bands, the last one open-ended
BINS = 9
HALF_BOT = 18.0


def factor_bin(wave: Wave, x: float, y: float) -> int:
    """Which of BINS equal bins from -1 to +1 holds the guess factor of the point (x, y) on `wave`."""
    return min(int((wave.guess_factor(x, y) + 1.0) * BINS / 2.0), BINS - 1)


def band_label(band: int | None) -> str:
    if band is None:
        return "all"
    return f"{band * 100}+" if band == BANDS - 1 else f"{band * 100}-{band * 100 + 99}"


def shares(counts: Counter[int]) -> str:
    total = sum(counts.values())
    return " ".join(f"{counts[i] / total:.2f}" for i in range(BINS))


def summarise(path: str) -> None:
    names: dict[int, str] = {}
    shots: dict[tuple[int, int], tuple[str, int, float]] = {}  # (round, bullet id) -> (owner, band, power)
    hits: set[tuple[int, int]] = set()
    profiles: dict[str, Counter[int]] = {}  # target -> where it was when the waves reached it
    aims: dict[str, Counter[int]] = {}  # shooter -> where its shots pointed, in the same factors
    waves: list[tuple[int, Wave]] = []  # (target id, the wave of a shot at it)
    before: dict[int, dict[str, float]] = {}  # the bots' states of the turn before (where a shot leaves from)
    for line in read_recording(path).lines:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "GameStartedEventForObserver":
            names = {int(p["id"]): str(p["name"]) for p in message["participants"]}
            continue
        if kind != "TickEventForObserver":
            continue
        states = {int(s["id"]): s for s in message["botStates"]}
        round_number, turn = int(message["roundNumber"]), int(message["turnNumber"])
        for event in message.get("events", []):
            bullet = event.get("bullet")
            if event.get("type") == "BulletHitBotEvent":
                hits.add((round_number, int(bullet["bulletId"])))
            if event.get("type") != "BulletFiredEvent" or len(before) != 2:
                continue
            owner = int(bullet["ownerId"])
            target = next(i for i in before if i != owner)
            me, them = before[owner], before[target]
            distance = math.hypot(them["x"] - me["x"], them["y"] - me["y"])
            shots[(round_number, int(bullet["bulletId"]))] = (
                names[owner],
                min(int(distance // 100.0), BANDS - 1),
                float(bullet["power"]),
            )
            bearing = direction_to(me["x"], me["y"], them["x"], them["y"])
            sideways = them["speed"] * math.sin(math.radians(them["direction"] - bearing))
            speed = calc_bullet_speed(float(bullet["power"]))
            wave = Wave(bullet["x"], bullet["y"], turn, speed, bearing, 1.0 if sideways >= 0 else -1.0)
            waves.append((target, wave))
            heading = math.radians(bullet["direction"])  # a point along the shot: where it pointed
            aim = factor_bin(wave, wave.x + 100.0 * math.cos(heading), wave.y + 100.0 * math.sin(heading))
            aims.setdefault(names[owner], Counter())[aim] += 1
        alive = []
        for target, wave in waves:
            target_state = states.get(target)
            if target_state is None or turn < wave.turn:  # the target died, or a new round began
                continue
            x, y = target_state["x"], target_state["y"]
            if wave.radius(turn) >= math.hypot(x - wave.x, y - wave.y) - HALF_BOT:
                profiles.setdefault(names[target], Counter())[factor_bin(wave, x, y)] += 1
            else:
                alive.append((target, wave))
        waves = alive
        before = states if len(states) == 2 else {}
    print(path)
    for name in sorted(set(names.values())):
        print(f"  {name}'s shots by distance: shots, hit share, mean power, damage per shot")
        for band in [*range(BANDS), None]:
            mine = [(k, p) for k, (owner, b, p) in shots.items() if owner == name and band in (b, None)]
            if not mine:
                continue
            hit = [power for key, power in mine if key in hits]
            n = len(mine)
            power, damage = sum(p for _, p in mine) / n, sum(calc_bullet_damage(p) for p in hit) / n
            print(f"    {band_label(band):>8}: {n:5d} {len(hit) / n:5.2f} {power:5.2f} {damage:6.2f}")
    print("  guess-factor shares, 9 bins from -1 to +1:")
    for name, profile in sorted(profiles.items()):
        print(f"    {name} as the target ({sum(profile.values())} waves): {shares(profile)}")
    for name, aim in sorted(aims.items()):
        print(f"    {name}'s aim ({sum(aim.values())} shots): {shares(aim)}")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("recordings", nargs="+")
    for path in parser.parse_args().recordings:
        try:
            summarise(path)
        except UserError as exc:  # not a recording: one line, as the sacbot commands say it
            raise SystemExit(f"duel_stats: {exc}") from None


if __name__ == "__main__":
    main()
