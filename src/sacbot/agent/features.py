"""State, action and reward of the learner: pure functions on protocol objects plus a small per-round memory.

This is the one code path of `sacbot play` and of the Gymnasium environment. It reads `TickEventForBot`
objects duck-typed (attributes `bot_state.x`, `events[i].type`, ...), so anything shaped like them works.

State S_t (17 float32, every entry in [-1, 1]; angles wrapped to [-180, 180) degrees and divided by 180):
   0 X / width              1 Y / height              2 body heading          3 speed / 8
   4 gun heading            5 radar heading           6 gun heat / 3          7 energy / 100
   8 north wall (H-Y)/H     9 south wall Y/H         10 east wall (W-X)/W    11 west wall X/W
  12 enemy distance / arena diagonal                 13 enemy bearing relative to our body heading
  14 enemy heading         15 enemy speed / 8        16 enemy energy / 100
The enemy entries describe the last seen enemy: its remembered position, seen from where we are now (so
distance and bearing follow our own motion), and the heading, speed and energy of its last scan. In a melee
the nearest bot scanned in a turn becomes the remembered one.
Before the first scan of a round (and after the remembered enemy dies) the enemy entries are
UNSEEN_ENEMY = distance 1 (as far as the arena allows), bearing 0, heading 0, speed 0, energy 1: a full-energy
bot somewhere far away: values a seen enemy rarely takes together, and they carry no false direction.

Action a in [-1, 1]^4 -> a complete BotIntent: turn rate a0*10, target speed a1*8, gun turn rate a2*20 (deg
and units per turn), firepower ReLU(a3)*3, sent as 0 (no shot) unless above 0.1. The gun and radar turn
independently of the body (adjust flags on), so each action entry moves one part. The radar is not in the
action space: radar_mode "spin" turns it 45 deg/turn (the maximum) all round; "lock" turns it toward the
last scan with an overshoot of the enemy's angular width (falling back to spinning when no scan is fresh).
Fire assist is off: the gun fires where the policy aims it.
Opt-in gun offset (`RoundMemory.gun_offset`, `NetworkSizes.gun_offset`): a2 is where the gun should point
instead of how it turns, a2*45 degrees (`GUN_OFFSET_RANGE`) from the remembered enemy's bearing; the gun
turns toward that at up to 20 deg/turn. Before the first scan (no bearing) a2 stays a turn, a2*20.

Reward R_t = damage our bullets dealt (BulletHitBotEvent.damage) - damage bullets dealt us - 5 per wall impact
(BotHitWallEvent) - 0.1*power per missed shot (BulletHitWallEvent of our bullet) + 20 on WonRoundEvent - 10
on our BotDeathEvent. `round_end_reward` adds the -10 when a round ended with neither (a server that sends no
BotDeathEvent to the victim, Tank Royale 1.1.0's quirk).

Opt-in aim shaping (`RoundMemory.aim_shaping` = k > 0; SACBOT_AIM_SHAPING, default 0 = off): potential-based
shaping F = gamma * Phi(s') - Phi(s) with Phi(s) = k * cos(gun heading - bearing to the remembered enemy) (0
before the first scan and at the round's end), which leaves the optimal policy unchanged (Ng et al., 1999) but
credits each gun turn at once instead of when a bullet lands tens of turns later.

Opt-in closing-in shaping (`RoundMemory.close_shaping` = k > 0; SACBOT_CLOSE_SHAPING, default 0 = off): the
same form with Phi(s) = k * (1 - distance to the remembered enemy / arena diagonal) (0, as far as the arena
allows, before the first scan and at the round's end). It credits each step toward the enemy at once: a
bullet fired from close in has fewer turns in flight, so a bot that dodges on seeing the shot has less time to
move. With both on, Phi is their sum.

Opt-in surf shaping (`RoundMemory.surf_shaping` = k > 0; SACBOT_SURF_SHAPING, default 0 = off; needs the
threat inputs, whose record it reads): when one of the enemy's waves (`threat_inputs`) reaches us, -k times
the share of the game's hit histogram in the bin of our guess factor on that wave, neighbours at half weight:
what a wave-surfing Robocode bot minimises, paid on the turn the bullet would land. Not potential-based: it
prices standing where the enemy's bullets have hit before, a dense stand-in for the hits themselves (a bullet
hits on about one wave in five, and only then does the damage reward speak).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np

from sacbot.agent.options import WaveAim
from sacbot.agent.sizes import (
    BULLET_COLUMNS,
    BULLET_INPUT_DIM,
    BULLET_SLOTS,
    THREAT_INPUT_DIM,
    WAVE_BINS,
    WAVE_DECAY,
    WAVE_INPUT_DIM,
    NetworkSizes,
)
from sacbot.protocol import BotIntent

STATE_DIM = 17
ACTION_DIM = 4

MAX_TURN_RATE = 10.0
MAX_SPEED = 8.0
MAX_GUN_TURN_RATE = 20.0
# The gun entry's reach with the gun offset on: +-45 degrees from the enemy's bearing, about the widest a
# power-3 bullet (11 units a turn) needs against a bot at 8 (asin(8 / 11) = 47 degrees).
GUN_OFFSET_RANGE = 45.0
MAX_RADAR_TURN_RATE = 45.0
MAX_FIREPOWER = 3.0
FIRE_THRESHOLD = 0.1
MAX_GUN_HEAT = 3.0
FULL_ENERGY = 100.0
BOT_DIAMETER = 36.0

WALL_PENALTY = 5.0
MISS_PENALTY_PER_POWER = 0.1
WIN_REWARD = 20.0
LOSS_PENALTY = 10.0
SHAPING_GAMMA = 0.99  # the trainer's default discount: potential-based shaping must use the same

# distance, bearing, heading, speed, energy before the first scan (see the module docstring).
UNSEEN_ENEMY = (1.0, 0.0, 0.0, 0.0, 1.0)

RadarMode = Literal["spin", "lock"]


def wrap_deg(angle: float) -> float:
    """An angle in degrees mapped to [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0


def wrap_rad(angle: Any) -> Any:
    """Radians mapped to [-pi, pi): a float, a numpy array or a torch tensor (`%` is a floored remainder in
    all three)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def bullet_speed(power: Any) -> Any:
    """A bullet's speed for its firepower, 20 - 3 * power (the rules' `calc_bullet_speed` without its clamp
    of the power): a float, a numpy array or a torch tensor."""
    return 20.0 - 3.0 * power


def _clip1(v: float) -> float:
    if v != v:  # NaN: a broken input must not leak into an intent
        return 0.0
    return -1.0 if v < -1.0 else (1.0 if v > 1.0 else v)


@dataclass(slots=True)
class RoundMemory:
    """What the features remember within a round: the last seen enemy and our own last pose; and, for the
    wave inputs (`wave_inputs`), over the whole game: where the enemy was when our past shots' waves reached
    it; for the threat inputs (`threat_inputs`), where its bullets hit us.

    Make one with its settings (the shapings, the gun offset, the wave decay; `for_sizes` takes the networks'
    meanings from their `NetworkSizes`), the arena size and our bot id (GameStartedEventForBot.my_id); call
    `start_game()` at a game's start (`new_game()` where the arena and the id stay) and `new_round()` at every
    round start.
    """

    arena_width: float
    arena_height: float
    my_id: int | None = None
    seen: bool = False
    enemy_id: int = -1
    enemy_x: float = 0.0
    enemy_y: float = 0.0
    enemy_direction: float = 0.0
    enemy_speed: float = 0.0
    enemy_energy: float = FULL_ENERGY
    last_scan_turn: int = -(10**9)
    turn: int = 0
    x: float = 0.0
    y: float = 0.0
    direction: float = 0.0
    radar_direction: float = 0.0
    gun_direction: float = 0.0
    radar_sign: float = 1.0
    outcome: int = 0  # +1 won, -1 lost, 0 open: the terminal reward is counted once
    aim_shaping: float = 0.0  # k of the opt-in aim shaping (module docstring); 0 = off
    close_shaping: float = 0.0  # k of the opt-in closing-in shaping (module docstring); 0 = off
    surf_shaping: float = 0.0  # k of the opt-in surf shaping (module docstring); 0 = off
    surf_due: float = 0.0  # the surf shaping's penalty of this tick's arrived waves, for `reward`
    gun_offset: bool = False  # the gun entry an offset from the enemy's bearing (module docstring)
    wave_decay: float = WAVE_DECAY  # the wave inputs' record: each wave's weight of the next (`wave_inputs`)
    wave_aim: WaveAim = "peak"  # what the wave inputs' aim entry points at (`NetworkSizes.wave_aim`)
    threat_visits: float = 0.0  # the visits' weight in the threat inputs' shares (`threat_inputs`)
    potential: float = 0.0  # Phi of the last rewarded tick (the shapings' sum)
    diagonal: float = field(init=False, default=1.0)
    # The wave inputs' record (`wave_inputs`): the waves of our shots in flight (origin x and y, the turn
    # fired, bullet speed, bearing to the enemy then in radians, the enemy's sideways direction then: +1
    # counter-clockwise about us, -1 clockwise, then the guess factors a linear aim and the histogram's peak
    # fired at, on the wave); the game's guess-factor histogram (decayed weights); the ids of our bullets
    # listed last tick; the enemy's position and sideways direction last tick; with `wave_aim` "virtual",
    # the decayed counts of the waves a linear aim and the peak would have hit, and the two aims of last tick
    # (guess factors, + counter-clockwise).
    waves: list[tuple[float, float, float, float, float, float, float, float]] = field(default_factory=list)
    wave_bins: list[float] = field(default_factory=lambda: [0.0] * WAVE_BINS)
    wave_bullet_ids: list[int] = field(default_factory=list)
    wave_enemy_seen: bool = False
    wave_enemy_x: float = 0.0
    wave_enemy_y: float = 0.0
    wave_sign: float = 1.0
    wave_previous_sign: float = 1.0
    gun_hits: list[float] = field(default_factory=lambda: [0.0, 0.0])
    wave_previous_aims: tuple[float, float] = (0.0, 0.0)
    # The threat inputs' record (`threat_inputs`): the enemy's waves in flight (origin x and y, the turn
    # fired, bullet speed, bearing from the origin to us then in radians, our sideways direction about the
    # origin then); the game's histogram of the guess factors its bullets hit us at (decayed weights); the
    # remembered enemy's id, energy and position at its last scan before this tick; the change to its energy
    # that bullet hits made since that scan (a turn's scans come before its bullet hits, so the next scan
    # shows them); our own sideways direction about it last tick. The seventh entry of a wave is 1 once it
    # has reached us (the surf shaping prices each wave once).
    threats: list[tuple[float, float, float, float, float, float, float]] = field(default_factory=list)
    threat_bins: list[float] = field(default_factory=lambda: [0.0] * WAVE_BINS)
    threat_enemy_id: int = -1
    threat_enemy_energy: float = 0.0
    threat_enemy_x: float = 0.0
    threat_enemy_y: float = 0.0
    threat_pending: float = 0.0
    threat_sign: float = 1.0
    # With `threat_visits`: the decayed counts of the enemy's waves that reached us unhit and of its hits on
    # us (its hit rate, which scales the visits' weight in the inputs), and the game's histogram of our guess
    # factors as its waves passed us unhit (the visits; decayed weights, `VISIT_DECAY`).
    threat_passed: float = 0.0
    threat_hits: float = 0.0
    threat_visits_bins: list[float] = field(default_factory=lambda: [0.0] * WAVE_BINS)

    def __post_init__(self) -> None:
        self.diagonal = math.hypot(self.arena_width, self.arena_height)

    @classmethod
    def for_sizes(
        cls,
        sizes: NetworkSizes,
        arena_width: float = 800.0,
        arena_height: float = 600.0,
        my_id: int | None = None,
        *,
        aim_shaping: float = 0.0,
        close_shaping: float = 0.0,
        surf_shaping: float = 0.0,
    ) -> RoundMemory:
        """A memory that keeps its records with the meanings the networks of `sizes` read them by (the gun
        entry, the wave record's decay and aim, the threat record's visits), and these shapings."""
        return cls(
            arena_width,
            arena_height,
            my_id,
            aim_shaping=aim_shaping,
            close_shaping=close_shaping,
            surf_shaping=surf_shaping,
            gun_offset=sizes.gun_offset,
            wave_decay=sizes.wave_decay,
            wave_aim=sizes.wave_aim,
            threat_visits=sizes.threat_visits,
        )

    def start_game(self, arena_width: float, arena_height: float, my_id: int | None) -> None:
        """A new game in an arena of this size, our bot id this one; the memory's settings stay."""
        self.arena_width, self.arena_height, self.my_id = arena_width, arena_height, my_id
        self.diagonal = math.hypot(arena_width, arena_height)
        self.new_game()

    def new_game(self) -> None:
        """Forget the game's records of the enemy's answers to our shots and of where its bullets hit us (a
        new game: maybe a new enemy)."""
        self.wave_bins = [0.0] * WAVE_BINS
        self.gun_hits = [0.0, 0.0]
        self.threat_bins = [0.0] * WAVE_BINS
        self.threat_passed = 0.0
        self.threat_hits = 0.0
        self.threat_visits_bins = [0.0] * WAVE_BINS
        self.new_round()

    def new_round(self) -> None:
        self.waves = []  # bullets do not outlive a round (their ids restart at 1)
        self.wave_bullet_ids = []
        self.wave_enemy_seen = False
        self.wave_sign = self.wave_previous_sign = 1.0
        self.wave_previous_aims = (0.0, 0.0)
        self.threats = []
        self.threat_enemy_id = -1
        self.threat_pending = 0.0
        self.threat_sign = 1.0
        self.forget_enemy()
        self.last_scan_turn = -(10**9)
        self.turn = 0
        self.radar_sign = 1.0
        self.outcome = 0
        self.potential = 0.0
        self.surf_due = 0.0

    def forget_enemy(self) -> None:
        self.seen = False
        self.enemy_id = -1
        self.enemy_energy = FULL_ENERGY
        self.enemy_speed = 0.0
        self.enemy_direction = 0.0


def update_memory(tick: Any, memory: RoundMemory) -> None:
    """Take this tick's scans and deaths into the memory, and our own pose."""
    st = tick.bot_state
    memory.x, memory.y, memory.direction, memory.radar_direction, memory.gun_direction = (
        st.x,
        st.y,
        st.direction,
        st.radar_direction,
        st.gun_direction,
    )
    memory.turn = tick.turn_number
    best = None
    best_d2 = math.inf
    for ev in tick.events:
        t = ev.type
        if t == "ScannedBotEvent":
            if memory.my_id is not None and ev.scanned_by_bot_id != memory.my_id:
                continue
            d2 = (ev.x - st.x) ** 2 + (ev.y - st.y) ** 2
            if d2 < best_d2:
                best, best_d2 = ev, d2
        elif t == "BotDeathEvent" and memory.seen and ev.victim_id == memory.enemy_id:
            memory.forget_enemy()
    if best is not None:
        memory.seen = True
        memory.enemy_id = best.scanned_bot_id
        memory.enemy_x, memory.enemy_y = best.x, best.y
        memory.enemy_direction, memory.enemy_speed, memory.enemy_energy = (
            best.direction,
            best.speed,
            best.energy,
        )
        memory.last_scan_turn = tick.turn_number


def encode_state(bot_state: Any, memory: RoundMemory, out: np.ndarray | None = None) -> np.ndarray:
    """The 17 state entries from our bot state and the memory (written into `out` when given).

    Plain float maths, inlined (this runs every step of every environment): `v if -1 <= v <= 1 else
    _clip1(v)` is `_clip1(v)` with its common case first, `(a + 180) % 360 - 180` is `wrap_deg(a)`; then one
    conversion of the 17 floats to float32.
    """
    w, h = memory.arena_width, memory.arena_height
    x, y = bot_state.x, bot_state.y
    direction = bot_state.direction
    xw = x / w
    xw = xw if -1.0 <= xw <= 1.0 else _clip1(xw)
    yh = y / h
    yh = yh if -1.0 <= yh <= 1.0 else _clip1(yh)
    north = (h - y) / h
    north = north if -1.0 <= north <= 1.0 else _clip1(north)
    east = (w - x) / w
    east = east if -1.0 <= east <= 1.0 else _clip1(east)
    speed = bot_state.speed / MAX_SPEED
    speed = speed if -1.0 <= speed <= 1.0 else _clip1(speed)
    heat = bot_state.gun_heat / MAX_GUN_HEAT
    heat = heat if -1.0 <= heat <= 1.0 else _clip1(heat)
    energy = bot_state.energy / FULL_ENERGY
    energy = energy if -1.0 <= energy <= 1.0 else _clip1(energy)
    if memory.seen:
        dx, dy = memory.enemy_x - x, memory.enemy_y - y
        dist = math.hypot(dx, dy) / memory.diagonal
        espeed = memory.enemy_speed / MAX_SPEED
        eenergy = memory.enemy_energy / FULL_ENERGY
        enemy: tuple[float, float, float, float, float] = (
            dist if -1.0 <= dist <= 1.0 else _clip1(dist),
            ((math.degrees(math.atan2(dy, dx)) - direction + 180.0) % 360.0 - 180.0) / 180.0,
            ((memory.enemy_direction + 180.0) % 360.0 - 180.0) / 180.0,
            espeed if -1.0 <= espeed <= 1.0 else _clip1(espeed),
            eenergy if -1.0 <= eenergy <= 1.0 else _clip1(eenergy),
        )
    else:
        enemy = UNSEEN_ENEMY
    values = (
        xw,
        yh,
        ((direction + 180.0) % 360.0 - 180.0) / 180.0,
        speed,
        ((bot_state.gun_direction + 180.0) % 360.0 - 180.0) / 180.0,
        ((bot_state.radar_direction + 180.0) % 360.0 - 180.0) / 180.0,
        heat,
        energy,
        north,
        yh,
        east,
        xw,
        *enemy,
    )
    if out is None:
        return np.array(values, np.float32)
    out[:] = values
    return out


def angle_input_columns(states: Any, sin: Callable[[Any], Any], cos: Callable[[Any], Any]) -> list[Any]:
    """The opt-in angle inputs (`NetworkSizes.angle_inputs`): sin and cos of four angles, computed from the
    state entries alone, for numpy arrays or torch tensors (pass the library's `sin` and `cos`); states
    (..., 17).

    The state gives angles as wrapped fractions of 180 degrees, so "where is the enemy from my gun" is a sum
    of three of them with a jump at +-180 that a network learns slowly. These columns give the same
    information smoothly: the gun's error to the enemy's bearing, the bearing from the body heading, the
    enemy's heading against the line of sight (its lateral and advancing motion), and the body heading.
    """
    return angle_inputs_of(states[..., 2], states[..., 4], states[..., 13], states[..., 14], sin, cos)


def angle_inputs_of(
    body: Any, gun: Any, relative: Any, heading: Any, sin: Callable[[Any], Any], cos: Callable[[Any], Any]
) -> list[Any]:
    """`angle_input_columns` from state entries 2 (body heading), 4 (gun heading), 13 (the enemy's bearing
    from the body) and 14 (its heading): arrays, tensors or plain floats (`math.sin`; `FastActor.step`)."""
    body = body * math.pi
    relative = relative * math.pi
    bearing = body + relative
    across = heading * math.pi - bearing
    aim = bearing - gun * math.pi
    return [sin(aim), cos(aim), sin(relative), cos(relative), sin(across), cos(across), sin(body), cos(body)]


# Energy units per turn of the energy phase: a shot (power 0.1-3, the enemy's energy drops by as much) turns
# it by 9-270 degrees.
ENERGY_PERIOD = 4.0


def energy_input_columns(states: Any, sin: Callable[[Any], Any], cos: Callable[[Any], Any]) -> list[Any]:
    """The opt-in energy inputs (`NetworkSizes.energy_inputs`): sin and cos of the remembered enemy's energy
    as a phase, one turn every `ENERGY_PERIOD` energy units; states (..., 17), numpy or torch.

    The enemy's energy drop is how a bot sees it fire: the signal every dodging Robocode bot moves on. In the
    state it is entry 16 (energy / 100), where a shot moves it by 0.001-0.03, a change the recurrent layer
    barely feels; as a phase the same shot turns it by 9-270 degrees. No new information: entry 16, scaled
    and wrapped.
    """
    return energy_inputs_of(states[..., 16], sin, cos)


def energy_inputs_of(energy: Any, sin: Callable[[Any], Any], cos: Callable[[Any], Any]) -> list[Any]:
    """`energy_input_columns` from state entry 16 (the enemy's energy / 100): array, tensor or float."""
    phase = energy * (2.0 * math.pi * FULL_ENERGY / ENERGY_PERIOD)
    return [sin(phase), cos(phase)]


def _clip(value: float, low: float | None, high: float | None) -> float:
    value = value if low is None or value >= low else low
    return value if high is None or value <= high else high


def _where(condition: bool, yes: float, no: float) -> float:
    return yes if condition else no


# The array functions `linear_aim` and `lead_inputs_of` call, for plain floats (`FastActor`'s per-tick path,
# where numpy's per-call overhead costs more than the maths); numpy and torch have them under these names.
FLOAT_MATH = SimpleNamespace(
    sin=math.sin,
    cos=math.cos,
    arcsin=math.asin,
    arctan2=math.atan2,
    hypot=math.hypot,
    clip=_clip,
    minimum=min,
    where=_where,
)
# Fixed-point steps of `linear_aim`: where the enemy is when the bullet gets there depends on how far it is.
AIM_ITERATIONS = 4


def linear_aim(
    xp: Any,
    x: Any,
    y: Any,
    distance: Any,
    bearing: Any,
    heading: Any,
    speed: Any,
    energy: Any,
    width: float,
    height: float,
) -> tuple[Any, Any, Any]:
    """Linear targeting, the teacher's gun (`sacbot.agent.teacher`): where to fire at an enemy `distance`
    away along absolute `bearing` (radians) from (x, y), moving along `heading` (radians) at `speed`, for a
    bullet of the power the teacher picks by distance (3 within 150, 2 within 300, else 1; at most our
    `energy` / 10, at least 0.1), the enemy's path clamped to the arena. Returns the aim's absolute
    direction (radians), that power and the distance to the aimed point. `xp`: numpy, torch or `FLOAT_MATH`,
    for arrays, tensors or floats."""
    ex, ey = x + distance * xp.cos(bearing), y + distance * xp.sin(bearing)
    power = xp.where(distance < 150.0, 3.0, xp.where(distance < 300.0, 2.0, 1.0))
    power = xp.minimum(power, xp.clip(energy / 10.0, 0.1, None))  # misses drain energy: save it
    speed_of_bullet = bullet_speed(power)
    vx, vy = speed * xp.cos(heading), speed * xp.sin(heading)
    half = BOT_DIAMETER / 2.0
    px, py = ex, ey
    for _ in range(AIM_ITERATIONS):
        t = xp.hypot(px - x, py - y) / speed_of_bullet + 1.0  # +1: the intent acts next turn
        px = xp.clip(ex + vx * t, half, width - half)
        py = xp.clip(ey + vy * t, half, height - half)
    return xp.arctan2(py - y, px - x), power, xp.hypot(px - x, py - y)


# The lead inputs read positions in the units of the 1v1 arena, as the teacher does (`TrainerConfig`).
LEAD_ARENA = (800.0, 600.0)


def lead_input_columns(states: Any, xp: Any) -> list[Any]:
    """The opt-in lead inputs (`NetworkSizes.lead_inputs`): where a linear aim points, computed from the
    state entries alone (`linear_aim`, the teacher's gun); states (..., 17), `xp` numpy or torch.

      0, 1  sin and cos of the linear aim's angle from our gun heading (the turn that aims it)
      2     the aim's lead from the enemy's bearing as a share of the largest escape angle of the bullet
            (asin(8 / bullet speed)), clipped to [-1, 1] (+: counter-clockwise): the guess factor a linear
            aim fires at, in the frame of the wave inputs' peak (entry 11 of `wave_inputs`)
      3     that largest escape angle / 45 degrees

    No new information: a gun that aims ahead of the enemy must compute this from six entries through a
    fixed-point iteration, which a network learns only roughly; given it, the linear aim, or an offset from
    it toward where the wave inputs say the enemy goes, is one linear step away.
    """
    return lead_inputs_of(
        xp, states[..., 0], states[..., 1], states[..., 2], states[..., 4], states[..., 7],
        states[..., 12], states[..., 13], states[..., 14], states[..., 15],
    )  # fmt: skip


def lead_inputs_of(
    xp: Any,
    x: Any,
    y: Any,
    body: Any,
    gun: Any,
    energy: Any,
    distance: Any,
    relative: Any,
    heading: Any,
    speed: Any,
) -> list[Any]:
    """`lead_input_columns` from state entries 0, 1, 2, 4, 7 and 12-15: arrays, tensors or plain floats
    (`FLOAT_MATH`; `FastActor.step`)."""
    w, h = LEAD_ARENA
    bearing = (body + relative) * math.pi
    aim, power, _ = linear_aim(
        xp, x * w, y * h, distance * math.hypot(w, h), bearing, heading * math.pi, speed * MAX_SPEED,
        energy * FULL_ENERGY, w, h,
    )  # fmt: skip
    error = aim - gun * math.pi
    escape = xp.arcsin(MAX_SPEED / bullet_speed(power))
    lead = wrap_rad(aim - bearing)
    return [xp.sin(error), xp.cos(error), xp.clip(lead / escape, -1.0, 1.0), escape / (math.pi / 4.0)]


def input_columns(states: Any, sizes: NetworkSizes, xp: Any) -> list[Any]:
    """The columns the networks read after the state (`NetworkSizes.input_dim`): the angle inputs, the
    energy inputs and the lead inputs, those that are on; `xp` numpy or torch."""
    columns = angle_input_columns(states, xp.sin, xp.cos) if sizes.angle_inputs else []
    columns += energy_input_columns(states, xp.sin, xp.cos) if sizes.energy_inputs else []
    return columns + (lead_input_columns(states, xp) if sizes.lead_inputs else [])


def network_inputs(states: np.ndarray, sizes: NetworkSizes) -> np.ndarray:
    """States (..., 17) -> network inputs (..., `sizes.input_dim`), float32: the state, `input_columns`."""
    columns = input_columns(states, sizes, np)
    if not columns:
        return states
    return np.concatenate([states, np.stack(columns, -1)], -1).astype(np.float32, copy=False)


def observe(tick: Any, memory: RoundMemory, out: np.ndarray | None = None) -> np.ndarray:
    """Update the memory from a TickEventForBot and return its state vector (float32, (17,))."""
    update_memory(tick, memory)
    return encode_state(tick.bot_state, memory, out)


# The offset from a bullet's path that `bullet_inputs` scales to 1: a hit needs under a bot's half-width.
BULLET_OFFSET_SCALE = 100.0


def bullet_inputs(tick: Any, memory: RoundMemory, out: np.ndarray | None = None) -> np.ndarray:
    """The critics' own inputs (`NetworkSizes.bullet_inputs`): where our bullets in flight are against the
    remembered enemy, 18 float32 in [-1, 1] (written into `out` when given). Read it after `observe` (the
    memory then holds this tick's scan); `tick.bullet_states` are our own bullets, as a bot's tick lists them.

    Three slots of six, for the three bullets nearest the enemy, those not yet past it first:
      0 1 (a bullet in the slot)
      1 along: how far ahead on the bullet's path the enemy lies / arena diagonal (below 0: passed it)
      2 offset: the enemy's signed distance from the path / 100 (clipped; a hit passes within ~18)
      3 the bullet's power / 3
      4 the enemy's velocity across the path / 8 (same sign as the offset: moving off the path)
      5 its velocity along the path / 8
    Empty slots, and all slots before the first scan, are zeros. The actor never reads these: it keeps the
    specification's 17 entries, and the critics, which only train it, see whether a shot is on its way to a
    hit before the hit's reward arrives (a privileged input, as in asymmetric actor-critic).
    """
    values = [0.0] * BULLET_INPUT_DIM
    if memory.seen:
        ex, ey = memory.enemy_x, memory.enemy_y
        heading = math.radians(memory.enemy_direction)
        evx = memory.enemy_speed * math.cos(heading)
        evy = memory.enemy_speed * math.sin(heading)
        past = memory.diagonal * 4.0  # sorts a bullet already past the enemy after every other
        rows: list[tuple[float, list[float]]] = []
        for b in tick.bullet_states:
            d = math.radians(b.direction)
            ux, uy = math.cos(d), math.sin(d)
            vx, vy = ex - b.x, ey - b.y
            along = ux * vx + uy * vy
            offset = ux * vy - uy * vx
            row = [
                1.0,
                _clip1(along / memory.diagonal),
                _clip1(offset / BULLET_OFFSET_SCALE),
                _clip1(b.power / MAX_FIREPOWER),
                _clip1((ux * evy - uy * evx) / MAX_SPEED),
                _clip1((ux * evx + uy * evy) / MAX_SPEED),
            ]
            key = math.hypot(vx, vy) + (past if along < -BOT_DIAMETER / 2.0 else 0.0)
            rows.append((key, row))
        rows.sort(key=lambda item: item[0])
        for slot, (_, row) in enumerate(rows[:BULLET_SLOTS]):
            values[slot * BULLET_COLUMNS : (slot + 1) * BULLET_COLUMNS] = row
    if out is None:
        return np.array(values, np.float32)
    out[:] = values
    return out


# The wave inputs' histogram forgets: each recorded wave scales the earlier weights by `WAVE_DECAY` (0.97:
# about the last 30 waves count), so a bot that changes how it moves is followed; networks built with another
# `NetworkSizes.wave_decay` read their record decayed by theirs (`RoundMemory.wave_decay`).
# The weight of recorded waves at which the wave inputs' confidence is one half.
WAVE_CONFIDENCE = 5.0


def _guess_factor(angle: float, bearing: float, sign: float, speed: float) -> float:
    """The guess factor of `angle` (radians, from a wave's origin) on a wave: its turn from the wave's
    `bearing`, signed by the sideways direction `sign` then, over the largest escape angle of a bullet at
    `speed` (asin(8 / speed)); clipped to [-1, 1]."""
    return _clip1(wrap_rad(angle - bearing) * sign / math.asin(MAX_SPEED / speed))


def _factor_bin(factor: float) -> int:
    """The one of WAVE_BINS equal bins from -1 to +1 that a guess factor falls in."""
    return min(int((factor + 1.0) * WAVE_BINS / 2.0), WAVE_BINS - 1)


def _bin_danger(bins: list[float], factor: float, total: float) -> float:
    """The share of a histogram's weight `total` in a guess factor's bin, its neighbours at half weight."""
    i = _factor_bin(factor)
    return (bins[i] + 0.5 * sum(bins[j] for j in (i - 1, i + 1) if 0 <= j < WAVE_BINS)) / total


def _record_factor(bins: list[float], factor: float, decay: float = WAVE_DECAY) -> None:
    """Add a guess factor to a decayed histogram: the earlier weights times `decay`, its bin plus 1."""
    for i in range(WAVE_BINS):
        bins[i] *= decay
    bins[_factor_bin(factor)] += 1.0


def _linear_factor(memory: RoundMemory, energy: float) -> float:
    """Where a linear aim (`linear_aim`) at the remembered enemy points now, as a guess factor from its
    bearing (+: counter-clockwise; the lead inputs' entry 2, clipped to [-1, 1])."""
    x, y = memory.x, memory.y
    ex, ey = memory.enemy_x, memory.enemy_y
    bearing = math.atan2(ey - y, ex - x)
    aim, power, _ = linear_aim(
        FLOAT_MATH, x, y, math.hypot(ex - x, ey - y), bearing, math.radians(memory.enemy_direction),
        memory.enemy_speed, energy, memory.arena_width, memory.arena_height,
    )  # fmt: skip
    return _clip1(wrap_rad(aim - bearing) / math.asin(MAX_SPEED / bullet_speed(power)))


def wave_inputs(tick: Any, memory: RoundMemory, out: np.ndarray | None = None) -> np.ndarray:
    """The wave inputs (`NetworkSizes.wave_inputs`): how the remembered enemy answered our past shots this
    game, `WAVE_INPUT_DIM` float32 in [-1, 1] (written into `out` when given). Read it after `observe`, once
    per tick (it keeps its record in the memory); `tick.bullet_states` are our own bullets.

    Each shot starts a wave: a circle from where the bullet was fired growing at its speed. When a wave
    reaches the enemy (its radius within half a bot of the enemy's distance from the origin, on a turn the
    enemy is scanned) we record the enemy's guess factor: its angle from the bearing it had at the shot,
    signed by the sideways direction it was moving then and divided by the largest angle a bot can cover
    before the bullet arrives (asin(8 / bullet speed)). +1: it went on as it moved at full speed; 0: it
    stayed on the line of fire (a head-on shot hits); below 0: it turned back. A linear aim hits a bot whose
    factors sit at its sideways speed / 8, an aim behind that a dodger's; the histogram says which this enemy
    is.
      0      confidence: w / (w + 5), w the histogram's total weight (0 before the first recorded wave)
      1-9    the histogram: the share of the weight in each of 9 equal guess-factor bins from -1 to +1
      10     the enemy's sideways speed now / 8 (+: counter-clockwise about us)
      11     the histogram's most-weighted bin (its centre) times the enemy's sideways direction now: the
             angle from the enemy's bearing where that bin lies, as a share of the largest escape angle
             (+: counter-clockwise); 0 before the first recorded wave
    The record lasts the game (`RoundMemory.new_game`), each wave weighing `RoundMemory.wave_decay` of the
    next (`WAVE_DECAY`, 0.97, unless the networks were built with another `NetworkSizes.wave_decay`).

    With `RoundMemory.wave_aim` "virtual" (`NetworkSizes.wave_aim`), entry 11 is the aim of whichever gun
    would have hit more of our past waves this game (virtual guns): each wave also keeps the guess factors
    that the histogram's peak and a linear aim (`linear_aim`, the lead inputs' entry 2) pointed at when it
    was fired, and where it reaches the enemy each counts a hit (weights decayed by `WAVE_DECAY`) if the
    enemy's factor lies within half a bot of it. While the linear aim's count is ahead, entry 11 is the
    linear aim's factor now (+: counter-clockwise; clipped to [-1, 1]); otherwise the peak, as above.
    """
    x, y, turn = memory.x, memory.y, float(memory.turn)
    bins = memory.wave_bins
    half = BOT_DIAMETER / 2.0
    lateral = 0.0
    if memory.seen:
        ex, ey = memory.enemy_x, memory.enemy_y
        if memory.last_scan_turn == memory.turn and memory.waves:
            kept: list[tuple[float, float, float, float, float, float, float, float]] = []
            for wave in memory.waves:
                wx, wy, fired, speed, bearing, sign, linear_factor, peak_factor = wave
                reach = math.hypot(ex - wx, ey - wy)
                if speed * (turn - fired) < reach - half:
                    kept.append(wave)
                    continue
                factor = _guess_factor(math.atan2(ey - wy, ex - wx), bearing, sign, speed)
                _record_factor(bins, factor, memory.wave_decay)
                if memory.wave_aim == "virtual":  # score the two guns (the peak's own waves carry no aims)
                    width = math.atan2(half, max(reach, 1.0)) / math.asin(MAX_SPEED / speed)
                    hits = memory.gun_hits
                    for i, aimed in enumerate((linear_factor, peak_factor)):
                        hits[i] = hits[i] * WAVE_DECAY + (abs(factor - aimed) <= width)
            memory.waves = kept
        line = math.atan2(ey - y, ex - x)
        lateral = memory.enemy_speed * math.sin(math.radians(memory.enemy_direction) - line)
        if abs(lateral) > 0.5:
            memory.wave_sign = 1.0 if lateral > 0.0 else -1.0
    # A bullet listed for the first time was fired last turn from where it is less one step of its speed,
    # at the enemy as it was last tick.
    ids: list[int] = []
    for b in tick.bullet_states:
        ids.append(b.bullet_id)
        if b.bullet_id not in memory.wave_bullet_ids and memory.wave_enemy_seen:
            speed = bullet_speed(b.power)
            d = math.radians(b.direction)
            ox, oy = b.x - speed * math.cos(d), b.y - speed * math.sin(d)
            bearing = math.atan2(memory.wave_enemy_y - oy, memory.wave_enemy_x - ox)
            sign = memory.wave_previous_sign
            linear_factor, peak_factor = (a * sign for a in memory.wave_previous_aims)
            memory.waves.append((ox, oy, turn - 1.0, speed, bearing, sign, linear_factor, peak_factor))
    memory.wave_bullet_ids = ids
    memory.wave_enemy_seen = memory.seen
    memory.wave_enemy_x, memory.wave_enemy_y = memory.enemy_x, memory.enemy_y
    memory.wave_previous_sign = memory.wave_sign
    total = sum(bins)
    values = [0.0] * WAVE_INPUT_DIM
    if total > 0.0:
        values[0] = total / (total + WAVE_CONFIDENCE)
        peak = 0
        for i in range(WAVE_BINS):
            values[1 + i] = bins[i] / total
            if bins[i] > bins[peak]:
                peak = i
        values[WAVE_BINS + 2] = (-1.0 + (peak + 0.5) * 2.0 / WAVE_BINS) * memory.wave_sign
    values[WAVE_BINS + 1] = _clip1(lateral / MAX_SPEED)
    if memory.wave_aim == "virtual":
        linear = _linear_factor(memory, tick.bot_state.energy) if memory.seen else 0.0
        memory.wave_previous_aims = (linear, values[WAVE_BINS + 2])
        if memory.gun_hits[0] > memory.gun_hits[1]:
            values[WAVE_BINS + 2] = linear
    if out is None:
        return np.array(values, np.float32)
    out[:] = values
    return out


# The threat inputs' record of hits forgets as the wave record does (`WAVE_DECAY`); a bot is hit a few times
# a round, so the record's confidence is one half at this (decayed) number of hits.
THREAT_CONFIDENCE = 3.0
# With `RoundMemory.threat_visits` (`NetworkSizes.threat_visits`): each enemy wave that reaches us unhit adds
# where we were to a histogram of visits of its own, the earlier visits times `VISIT_DECAY`; the inputs'
# shares mix it in at `threat_visits` times the enemy's hit rate on us over `VISIT_RATE` (at most 1). The hit
# rate: its hits over its waves that reached us (both decayed by `WAVE_DECAY` a wave), `THREAT_CONFIDENCE`
# waves more below.
VISIT_DECAY = 0.99
VISIT_RATE = 0.15
# The time to a wave's arrival that the threat inputs scale to 1 (turns), and the number of waves in flight
# that counts as many.
THREAT_HORIZON = 40.0
THREAT_WAVES = 3.0
# An energy drop of the remembered enemy in this range, where nothing else explains it, is a shot of that
# power (firepower 0.1-3; a little slack for rounding).
MIN_SHOT_DROP = 0.09
MAX_SHOT_DROP = 3.01
RAM_DAMAGE = 0.6  # each bot's energy lost per turn of contact
HIT_ENERGY_GAIN = 3.0  # the shooter's energy gained per unit of power when its bullet hits


def threat_inputs(tick: Any, memory: RoundMemory, out: np.ndarray | None = None) -> np.ndarray:
    """The threat inputs (`NetworkSizes.threat_inputs`): the remembered enemy's shots in flight and where its
    bullets hit us this game, `THREAT_INPUT_DIM` float32 in [-1, 1] (written into `out` when given). Read it
    after `observe`, once per tick (it keeps its record in the memory). The mirror of `wave_inputs`: what a
    wave-surfing bot reads to dodge a gun that learns where it goes.

    A bot cannot see the enemy's bullets; it sees the enemy fire by its energy: a drop of 0.1-3 between two
    scans that rams (0.6, in the scan of their turn), our hits (their damage) and its hits on us (it gains 3 *
    power; both in the next turn's scan: a turn scans before its bullets hit) do not explain is a shot of that
    power: a wave from where the enemy was at its previous scan, fired the turn before (the latest it can have
    been), growing at the bullet's speed. Each wave keeps the bearing from its origin to us and our sideways
    direction about the enemy then; our guess factor on it is the angle we have moved since, signed by that
    direction and divided by the largest angle a bot can cover before the bullet arrives (asin(8 / bullet
    speed)): +1 went on at full speed, 0 stayed on the line a head-on shot takes, below 0 turned back. When
    its bullet hits us, the guess factor of the bullet's direction on the matching wave is recorded; a wave
    past us is dropped.
      0      the waves in flight / 3 (clipped)
      1      the nearest wave's turns until it reaches us / 40 (clipped; 1 when none)
      2      our guess factor on it now (0 when none)
      3      its power / 3 (0 when none)
      4      the hits' confidence: w / (w + 3), w the hit histogram's total weight (0 before the first hit)
      5-13   the hit histogram: the share of the weight in each of 9 equal guess-factor bins from -1 to +1
      14     the share of that weight in the bin of our guess factor on the nearest wave (0 when none)
    The hit record lasts the game (`RoundMemory.new_game`), each hit weighing `WAVE_DECAY` of the next; the
    waves, a round.

    With `RoundMemory.threat_visits` (`NetworkSizes.threat_visits`) above 0, each wave that reaches us unhit
    adds our guess factor on it (a visit) to a second histogram (each visit weighing `VISIT_DECAY` of the
    next), and entries 5-14 read the mix (hits share + w * visits share) / (1 + w), w that weight times the
    enemy's hit rate on us over `VISIT_RATE` (at most 1): where we were as its waves passed, not only where
    its bullets hit us, which is what a gun that counts our guess factors (Surfer's, Gunner's) aims by. The
    hits' own histogram and confidence (entry 4) stay as without visits; against a gun that rarely hits, the
    visits weigh little.
    """
    x, y, turn = memory.x, memory.y, float(memory.turn)
    me, enemy = memory.my_id, memory.enemy_id
    bins = memory.threat_bins
    half = BOT_DIAMETER / 2.0
    # What this tick's events did to the enemy's energy besides its shots (rams now, bullet hits by the next
    # scan), and its bullets that hit us.
    rammed = 0.0
    struck = 0.0
    hits: list[tuple[float, float]] = []  # (speed, direction in radians)
    for ev in tick.events:
        t = ev.type
        if t == "HitByBulletEvent" or t == "BulletHitBotEvent":
            bullet = ev.bullet
            if t == "HitByBulletEvent" or (me is not None and ev.victim_id == me):
                if bullet.owner_id == enemy:
                    struck += HIT_ENERGY_GAIN * bullet.power
                    hits.append((bullet_speed(bullet.power), math.radians(bullet.direction)))
            elif ev.victim_id == enemy:
                struck -= ev.damage
        elif t == "BotHitBotEvent" and ev.victim_id == enemy:
            rammed -= RAM_DAMAGE
    waves = memory.threats
    for speed, direction in hits:  # the nearest wave of the bullet's speed, by its radius
        best, best_gap = -1, BOT_DIAMETER + 2.0 * speed
        for i in range(len(waves)):
            wx, wy, fired, wspeed, bearing, sign, _ = waves[i]
            if abs(wspeed - speed) < 0.05:
                gap = abs(wspeed * (turn - fired) - math.hypot(x - wx, y - wy))
                if gap < best_gap:
                    best, best_gap = i, gap
        if best >= 0:
            wx, wy, fired, wspeed, bearing, sign, _ = waves.pop(best)
            _record_factor(bins, _guess_factor(direction, bearing, sign, wspeed))
            if memory.threat_visits > 0.0:
                memory.threat_hits += 1.0
    fresh = memory.seen and memory.last_scan_turn == memory.turn
    if fresh:
        if enemy == memory.threat_enemy_id:
            drop = memory.threat_enemy_energy + memory.threat_pending + rammed - memory.enemy_energy
            if MIN_SHOT_DROP <= drop <= MAX_SHOT_DROP:
                ox, oy = memory.threat_enemy_x, memory.threat_enemy_y
                speed = bullet_speed(min(drop, MAX_FIREPOWER))
                bearing = math.atan2(y - oy, x - ox)
                waves.append((ox, oy, turn - 1.0, speed, bearing, memory.threat_sign, 0.0))
        memory.threat_enemy_id, memory.threat_enemy_energy = enemy, memory.enemy_energy
        memory.threat_enemy_x, memory.threat_enemy_y = memory.enemy_x, memory.enemy_y
        memory.threat_pending = struck
    else:
        memory.threat_pending += struck
        if not memory.seen:
            memory.threat_enemy_id = -1
    values = [0.0] * THREAT_INPUT_DIM
    values[1] = 1.0
    kept: list[tuple[float, float, float, float, float, float, float]] = []
    soonest = math.inf
    nearest_factor = 0.0
    total = sum(bins)
    for wave in waves:
        wx, wy, fired, speed, bearing, sign, reached = wave
        d = math.hypot(x - wx, y - wy)
        left = (d - speed * (turn - fired)) / speed
        if left < -half / speed:  # past us
            continue
        if left <= 0.0 and not reached:  # its bullet lands now, if it was aimed where we are
            wave = (wx, wy, fired, speed, bearing, sign, 1.0)
            if memory.threat_visits > 0.0 or memory.surf_shaping:  # where we are as it arrives
                here = _guess_factor(math.atan2(y - wy, x - wx), bearing, sign, speed)
                if memory.threat_visits > 0.0:  # it missed: a visit; its hit rate on us
                    memory.threat_passed = memory.threat_passed * WAVE_DECAY + 1.0
                    memory.threat_hits *= WAVE_DECAY
                    _record_factor(memory.threat_visits_bins, here, VISIT_DECAY)
                if memory.surf_shaping and total > 0.0:
                    memory.surf_due += memory.surf_shaping * _bin_danger(bins, here, total)
        kept.append(wave)
        if left < soonest:
            soonest = left
            nearest_factor = _guess_factor(math.atan2(y - wy, x - wx), bearing, sign, speed)
            values[1] = _clip1(max(left, 0.0) / THREAT_HORIZON)
            values[3] = _clip1((20.0 - speed) / 3.0 / MAX_FIREPOWER)
    memory.threats = kept
    if kept:
        values[0] = _clip1(len(kept) / THREAT_WAVES)
        values[2] = nearest_factor
    if total > 0.0:
        values[4] = total / (total + THREAT_CONFIDENCE)
        for i in range(WAVE_BINS):
            values[5 + i] = bins[i] / total
        if memory.threat_visits > 0.0 and memory.threat_passed > 0.0:  # and where we were, by its hit rate
            rate = memory.threat_hits / (memory.threat_passed + THREAT_CONFIDENCE)
            w = memory.threat_visits * min(1.0, rate / VISIT_RATE)
            visited = sum(memory.threat_visits_bins)
            for i in range(WAVE_BINS):
                values[5 + i] = (values[5 + i] + w * memory.threat_visits_bins[i] / visited) / (1.0 + w)
        if kept:
            values[5 + WAVE_BINS] = values[5 + _factor_bin(nearest_factor)]
    if memory.seen:  # our sideways direction about the enemy, for the next wave
        away = math.atan2(y - memory.enemy_y, x - memory.enemy_x)
        lateral = tick.bot_state.speed * math.sin(math.radians(memory.direction) - away)
        if abs(lateral) > 0.5:
            memory.threat_sign = 1.0 if lateral > 0.0 else -1.0
    if out is None:
        return np.array(values, np.float32)
    out[:] = values
    return out


def stored_observation(
    tick: Any,
    memory: RoundMemory,
    waves: bool,
    threats: bool,
    bullets: bool,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Update the memory from a tick and return what is stored for it: the 17-entry state (`observe`), then,
    with `waves`, the wave inputs, with `threats`, the threat inputs, then, with `bullets`, the critics'
    bullet inputs (`NetworkSizes.stored_dim` entries in all; written into `out` when given). The one layout
    the environments, `play` and the replay share."""
    if not waves and not threats and not bullets:
        return observe(tick, memory, out)
    wave_end = STATE_DIM + (WAVE_INPUT_DIM if waves else 0)
    width = wave_end + (THREAT_INPUT_DIM if threats else 0)
    if out is None:
        out = np.empty(width + (BULLET_INPUT_DIM if bullets else 0), np.float32)
    observe(tick, memory, out[:STATE_DIM])
    if waves:
        wave_inputs(tick, memory, out[STATE_DIM:wave_end])
    if threats:
        threat_inputs(tick, memory, out[wave_end:width])
    if bullets:
        bullet_inputs(tick, memory, out[width:])
    return out


def reward(tick: Any, memory: RoundMemory) -> float:
    """The reward of this tick's events (the consequence of the previous intent); counts the outcome once."""
    me = memory.my_id
    r = 0.0
    for ev in tick.events:
        t = ev.type
        if t == "BulletHitBotEvent":
            if ev.victim_id == me:
                r -= ev.damage
            elif me is None or ev.bullet.owner_id == me:
                r += ev.damage
        elif t == "HitByBulletEvent":  # the official APIs' name for BulletHitBotEvent with victim == me
            r -= ev.damage
        elif t == "BotHitWallEvent":
            if me is None or ev.victim_id == me:
                r -= WALL_PENALTY
        elif t == "BulletHitWallEvent":
            if me is None or ev.bullet.owner_id == me:
                r -= MISS_PENALTY_PER_POWER * ev.bullet.power
        elif t == "WonRoundEvent":
            if memory.outcome == 0:
                memory.outcome = 1
                r += WIN_REWARD
        elif t == "BotDeathEvent":
            if ev.victim_id == me and memory.outcome == 0:
                memory.outcome = -1
                r -= LOSS_PENALTY
    if memory.surf_due:
        r -= memory.surf_due
        memory.surf_due = 0.0
    if memory.aim_shaping or memory.close_shaping:
        phi = aim_potential(tick.bot_state, memory) + close_potential(tick.bot_state, memory)
        r += SHAPING_GAMMA * phi - memory.potential
        memory.potential = phi
    return r


def shaping_problem(aim: float, close: float, surf: float, threat_inputs: bool) -> str | None:
    """What is wrong with shaping weights, in one line (None: nothing): each must be a finite 0 (off) or
    more, and the surf shaping reads the threat inputs' record. (This module ships inside exported bots,
    so the caller raises.)"""
    for name, k in (("aim_shaping", aim), ("close_shaping", close), ("surf_shaping", surf)):
        if not (k >= 0.0 and math.isfinite(k)):
            return f"{name} must be 0 (off) or more, not {k!r}"
    if surf and not threat_inputs:
        return "surf_shaping needs the threat inputs (SACBOT_THREAT_INPUTS=1)"
    return None


def aim_potential(bot_state: Any, memory: RoundMemory) -> float:
    """Phi = k * cos(gun heading - bearing to the remembered enemy); 0 while no enemy is remembered."""
    if not memory.seen or not memory.aim_shaping:
        return 0.0
    bearing = math.atan2(memory.enemy_y - bot_state.y, memory.enemy_x - bot_state.x)
    return memory.aim_shaping * math.cos(math.radians(bot_state.gun_direction) - bearing)


def close_potential(bot_state: Any, memory: RoundMemory) -> float:
    """Phi = k * (1 - distance to the remembered enemy / arena diagonal); 0 while no enemy is remembered."""
    if not memory.seen or not memory.close_shaping:
        return 0.0
    distance = math.hypot(memory.enemy_x - bot_state.x, memory.enemy_y - bot_state.y)
    return memory.close_shaping * (1.0 - min(distance / memory.diagonal, 1.0))


def round_end_reward(memory: RoundMemory) -> float:
    """At RoundEnded: -10 if the round's outcome was not yet counted (no WonRoundEvent reached us), else 0;
    with shaping, also the step to the terminal potential 0."""
    r = -memory.potential
    memory.potential = 0.0
    if memory.outcome != 0:
        return r
    memory.outcome = -1
    return r - LOSS_PENALTY


def radar_turn(radar_mode: RadarMode, memory: RoundMemory) -> float:
    """Radar turn rate for the mode: spin at the maximum, or lock onto a fresh last scan."""
    if radar_mode == "lock" and memory.seen and memory.turn - memory.last_scan_turn <= 1:
        dx, dy = memory.enemy_x - memory.x, memory.enemy_y - memory.y
        delta = wrap_deg(math.degrees(math.atan2(dy, dx)) - memory.radar_direction)
        # Overshoot by the enemy's angular width so the sweep passes over it even when it moves.
        width = math.degrees(math.atan2(BOT_DIAMETER, max(math.hypot(dx, dy), 1.0)))
        sign = 1.0 if delta >= 0.0 else -1.0
        memory.radar_sign = sign
        return max(-MAX_RADAR_TURN_RATE, min(MAX_RADAR_TURN_RATE, delta + sign * width))
    return memory.radar_sign * MAX_RADAR_TURN_RATE


def action_to_intent(action: Any, radar_mode: RadarMode, memory: RoundMemory) -> BotIntent:
    """A complete BotIntent (every numeric field and flag set) from an action in [-1, 1]^4 (the gun entry an
    offset from the remembered enemy's bearing where `memory.gun_offset` is on and an enemy was seen)."""
    vals = action.tolist() if hasattr(action, "tolist") else list(action)  # plain floats, fast
    a0, a1, a2, a3 = vals[0], vals[1], vals[2], vals[3]  # clipped as _clip1 does, in-range case first
    a0 = a0 if -1.0 <= a0 <= 1.0 else _clip1(a0)
    a1 = a1 if -1.0 <= a1 <= 1.0 else _clip1(a1)
    a2 = a2 if -1.0 <= a2 <= 1.0 else _clip1(a2)
    a3 = a3 if -1.0 <= a3 <= 1.0 else _clip1(a3)
    power = a3 * MAX_FIREPOWER if a3 > 0.0 else 0.0
    if memory.gun_offset and memory.seen:
        bearing = math.degrees(math.atan2(memory.enemy_y - memory.y, memory.enemy_x - memory.x))
        gun_turn = wrap_deg(bearing + a2 * GUN_OFFSET_RANGE - memory.gun_direction)
        gun_turn = max(-MAX_GUN_TURN_RATE, min(MAX_GUN_TURN_RATE, gun_turn))
    else:
        gun_turn = a2 * MAX_GUN_TURN_RATE
    return BotIntent(
        turn_rate=a0 * MAX_TURN_RATE,
        target_speed=a1 * MAX_SPEED,
        gun_turn_rate=gun_turn,
        radar_turn_rate=radar_turn(radar_mode, memory),
        firepower=power if power > FIRE_THRESHOLD else 0.0,
        adjust_gun_for_body_turn=True,
        adjust_radar_for_body_turn=True,
        adjust_radar_for_gun_turn=True,
        rescan=False,
        fire_assist=False,
    )
