"""Each classic opponent shows its signature in real engine games (in-process, the same policy objects that
play over WebSocket): SpinBot circles, Walls hugs the walls, Corners ends in its corner, RamFire rams,
TrackFire stands still with its gun on the target, Target never fires, and so on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pytest

from sacbot.engine import Game, game_setup_for
from sacbot.errors import UserError
from sacbot.opponents import ALL_OPPONENT_NAMES, ClassicBot, make_opponent, opponent_class
from sacbot.opponents.corners import Corners
from sacbot.opponents.local import LocalBattle
from sacbot.opponents.motion import normalize_relative
from sacbot.protocol import BotIntent, TickEventForBot

SETUP = game_setup_for("1v1", number_of_rounds=1)
W, H = float(SETUP.arena_width), float(SETUP.arena_height)


@dataclass
class Recorder:
    """Wraps a policy and keeps every tick it saw and every intent it answered."""

    policy: ClassicBot
    ticks: list[TickEventForBot] = field(default_factory=list)
    intents: list[BotIntent] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.policy.name

    def __getattr__(self, item: str) -> Any:
        return getattr(self.policy, item)

    def on_tick(self, tick: TickEventForBot) -> BotIntent:
        intent = self.policy.on_tick(tick)
        self.ticks.append(tick)
        self.intents.append(intent)
        return intent

    def events(self, kind: str) -> list[Any]:
        return [e for t in self.ticks for e in t.events if e.type == kind]


def battle(me: str, them: str, seed: int, turns: int) -> tuple[Recorder, Recorder, Game]:
    a, b = Recorder(make_opponent(me, seed)), Recorder(make_opponent(them, seed + 1000))
    local = LocalBattle(SETUP, {1: a, 2: b}, seed=seed)
    local.play_round(max_turns=turns)
    return a, b, local.game


def central_seed(margin: float, start: int = 0) -> int:
    """The first seed from `start` that places bot 1 at least `margin` from every wall (walls end circles)."""
    for seed in range(start, start + 200):
        x, y, _ = LocalBattle(
            SETUP, {1: make_opponent("Target"), 2: make_opponent("Target")}, seed
        ).game.start_position(1)
        if min(x, W - x, y, H - y) >= margin:
            return seed
    raise AssertionError("no central placement found")


def states(rec: Recorder) -> list[Any]:
    return [t.bot_state for t in rec.ticks]


def test_spinbot_drives_in_circles_at_speed_5() -> None:
    spin, _, _ = battle("SpinBot", "Target", seed=central_seed(110), turns=300)
    st = states(spin)
    circling = [
        (s.speed == 5.0 and math.isclose(normalize_relative(s.direction - p.direction), -6.25, abs_tol=1e-9))
        for p, s in zip(st[10:], st[11:], strict=False)
    ]
    assert sum(circling) / len(circling) > 0.9  # right turn at the top turn rate for speed 5, every turn
    # One revolution (360 / 6.25 = 57.6 turns) traces a circle of radius 5 / 6.25 deg = 45.8 round its middle.
    loop = st[20:78]
    cx, cy = sum(s.x for s in loop) / len(loop), sum(s.y for s in loop) / len(loop)
    radii = [math.hypot(s.x - cx, s.y - cy) for s in loop]
    assert max(radii) - min(radii) < 3.0
    assert abs(sum(radii) / len(radii) - 5.0 / math.radians(6.25)) < 2.0
    assert spin.events("BulletFiredEvent")
    assert all(e.bullet.power == 3.0 for e in spin.events("BulletFiredEvent"))


def test_walls_moves_along_the_walls_with_its_gun_pointing_inward() -> None:
    walls, _, _ = battle("Walls", "Target", seed=2, turns=600)
    # Until it bumps into a bot: then it backs off 100 and turns across the arena, as the sample does.
    bumps = walls.events("BotHitBotEvent")
    st = states(walls)[150 : bumps[0].turn_number if bumps else None]
    assert len(st) > 100
    near = [min(s.x, W - s.x, s.y, H - s.y) <= 18.5 for s in st]
    assert sum(near) / len(near) > 0.95
    moving = [s for s in st if s.speed == 8.0]
    assert len(moving) > len(st) / 2  # it drives, it does not park
    # Gun a quarter turn right of the body: into the arena while it drives clockwise along a wall.
    assert all(
        math.isclose(normalize_relative(s.gun_direction - s.direction), -90.0, abs_tol=1e-6) for s in moving
    )
    until_bump = states(walls)[: bumps[0].turn_number if bumps else None]
    visited = {
        (round(s.x / W), round(s.y / H))
        for s in until_bump
        if min(s.x, W - s.x) <= 18.5 and min(s.y, H - s.y) <= 18.5
    }
    assert len(visited) >= 2  # it went round at least one corner


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_corners_ends_in_its_corner_and_sweeps_the_gun(seed: int) -> None:
    corners, _, _ = battle("Corners", "Fire", seed=seed, turns=400)
    assert isinstance(corners.policy, Corners)
    corner = corners.policy.corner
    # First wall in direction `corner`, then a left turn: the corner lies 45 degrees left of it.
    want_x = W - 18 if math.cos(math.radians(corner + 45)) > 0 else 18.0
    want_y = H - 18 if math.sin(math.radians(corner + 45)) > 0 else 18.0
    last = states(corners)[-100:]
    assert all(abs(s.x - want_x) < 1e-6 and abs(s.y - want_y) < 1e-6 and s.speed == 0.0 for s in last)
    gun = [s.gun_direction for s in last]
    assert (
        max(normalize_relative(g - gun[0]) for g in gun) - min(normalize_relative(g - gun[0]) for g in gun)
        > 30
    )
    # The sweep stays inside the quarter that faces the arena.
    inward = (corner + 225) % 360
    assert all(abs(normalize_relative(g - inward)) <= 45.0 + 1e-6 for g in gun)


def test_ramfire_rams_its_target_and_fires_on_contact() -> None:
    ram, target, game = battle("RamFire", "Target", seed=4, turns=1000)
    rams = [e for e in ram.events("BotHitBotEvent") if e.rammed]
    assert len(rams) >= 3
    results = {r.name: r for r in game.results_for_observer()} if game.round_over else {}
    fired = ram.events("BulletFiredEvent")
    assert fired and fired[0].turn_number >= rams[0].turn_number  # it shoots once in contact
    if results:
        assert results["RamFire"].ram_damage > 0


def test_trackfire_stands_still_with_its_gun_on_the_target() -> None:
    track, target, _ = battle("TrackFire", "Target", seed=5, turns=400)
    st = states(track)
    assert len({(s.x, s.y) for s in st}) == 1
    fired = track.events("BulletFiredEvent")
    assert fired
    start = fired[0].turn_number
    on_target = []
    theirs = states(target)
    for k in range(start, len(st)):
        if any(theirs[j].speed != 0.0 for j in range(k - 5, k + 1)):
            continue  # Target just moved away after a hit; TrackFire's search takes a few turns
        bearing = math.degrees(math.atan2(theirs[k].y - st[k].y, theirs[k].x - st[k].x))
        on_target.append(abs(normalize_relative(bearing - st[k].gun_direction)) <= 3.0)
    assert len(on_target) > 50
    assert sum(on_target) / len(on_target) > 0.9
    assert all(e.bullet.power <= 3.0 for e in fired)


def test_target_never_fires_and_only_moves_after_losing_20_energy() -> None:
    target, spin, _ = battle("Target", "SpinBot", seed=6, turns=1500)
    assert not target.events("BulletFiredEvent")
    assert all(i.firepower == 0.0 for i in target.intents)
    st = states(target)
    first_move = next((k for k, s in enumerate(st) if (s.x, s.y) != (st[0].x, st[0].y)), None)
    if first_move is not None:
        assert st[first_move - 1].energy <= 80.0


def test_fire_sits_still_spinning_its_gun_until_hit() -> None:
    fire, _, _ = battle("Fire", "Target", seed=7, turns=300)
    st = states(fire)
    assert len({(s.x, s.y) for s in st}) == 1  # Target never shoots back, so Fire never has to move
    steps = [normalize_relative(b.gun_direction - a.gun_direction) for a, b in zip(st, st[1:], strict=False)]
    assert -5.0 in steps and all(s in (-5.0, 0.0) or abs(s) <= 20.0 for s in steps)
    assert fire.events("BulletFiredEvent")


def test_fire_side_steps_when_hit() -> None:
    fire, _, _ = battle("Fire", "TrackFire", seed=8, turns=800)
    hits = [e for e in fire.events("BulletHitBotEvent") if e.victim_id == fire.policy.my_id]
    assert hits
    st = states(fire)
    assert len({(round(s.x, 6), round(s.y, 6)) for s in st}) > 1


def test_myfirstbot_goes_forward_100_turns_its_gun_and_comes_back() -> None:
    bot, _, _ = battle("MyFirstBot", "Target", seed=central_seed(120, start=9), turns=200)
    st = states(bot)
    x0, y0 = st[0].x, st[0].y
    dist = [math.hypot(s.x - x0, s.y - y0) for s in st]
    stop = next(k for k in range(1, len(st)) if st[k].speed == 0.0 and dist[k] > 1)
    assert math.isclose(dist[stop], 100.0, abs_tol=1e-6)  # the blocking move stopped on the spot
    # Then a full gun turn standing still (18 turns at 20 deg), then back to where it started.
    assert all(st[k].speed == 0.0 for k in range(stop, stop + 18))
    back = next(k for k in range(stop + 18, len(st)) if st[k].speed == 0.0 and dist[k] < 1e-6)
    assert back > stop + 18
    assert all(s.speed <= 0.0 for s in st[stop + 18 : back])


def test_crazy_drives_a_wavy_path_and_reverses_at_walls() -> None:
    crazy, _, _ = battle("Crazy", "Target", seed=10, turns=600)
    st = states(crazy)
    turns = [normalize_relative(b.direction - a.direction) for a, b in zip(st, st[1:], strict=False)]
    signs = [1 if t > 0 else -1 for t in turns if abs(t) > 1e-9]
    changes = sum(1 for a, b in zip(signs, signs[1:], strict=False) if a != b)
    assert changes >= 3  # right, left, right, ...
    assert max(s.speed for s in st) == 8.0
    if crazy.events("BotHitWallEvent"):
        assert min(s.speed for s in st) < 0.0  # backing away after a wall


def test_velocibot_drives_by_rates_forward_4_then_back_6() -> None:
    velo, _, _ = battle("VelociBot", "Target", seed=central_seed(200, start=11), turns=120)
    st = states(velo)
    speeds = [s.speed for s in st]
    assert 4.0 in speeds[5:33] and -6.0 in speeds[40:66]
    gun_steps = [
        normalize_relative(b.gun_direction - a.gun_direction) for a, b in zip(st[1:], st[2:], strict=False)
    ]
    assert sum(1 for g in gun_steps if math.isclose(g, 15.0, abs_tol=1e-6)) > len(gun_steps) * 0.8


@pytest.mark.parametrize("name", ALL_OPPONENT_NAMES)
def test_every_opponent_sends_complete_intents_and_plays_a_full_round(name: str) -> None:
    me, _, game = battle(name, "SpinBot", seed=12, turns=5000)
    assert game.round_over
    numeric = ("turn_rate", "gun_turn_rate", "radar_turn_rate", "target_speed", "firepower")
    flags = ("adjust_gun_for_body_turn", "adjust_radar_for_body_turn", "adjust_radar_for_gun_turn", "rescan")
    for intent in me.intents:
        assert all(isinstance(getattr(intent, f), float | int) for f in numeric)
        assert all(isinstance(getattr(intent, f), bool) for f in flags)


def test_same_seed_same_game() -> None:
    a1, b1, g1 = battle("Corners", "Crazy", seed=13, turns=300)
    a2, b2, g2 = battle("Corners", "Crazy", seed=13, turns=300)
    assert [s.x for s in states(a1)] == [s.x for s in states(a2)]
    assert [s.y for s in states(b1)] == [s.y for s in states(b2)]


def test_names_are_case_insensitive_and_unknown_names_are_a_user_error() -> None:
    assert opponent_class("spinbot").name == "SpinBot"
    with pytest.raises(UserError) as info:
        opponent_class("NoSuchBot")
    assert info.value.exit_code == 2
    assert "SpinBot" in str(info.value)
