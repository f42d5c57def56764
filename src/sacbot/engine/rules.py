"""Constants and formulas of the rules (server `rules/rules.kt`, `rules/math.kt`, `model/math.kt`).

Plain floats in IEEE order: the server's Kotlin doubles and Python floats give the same results when the
operations are done in the same order, which matters for gun heat reaching exactly 0.0.
"""

from __future__ import annotations

import math

INITIAL_BOT_ENERGY = 100.0
INITIAL_DROID_ENERGY = 120.0
INITIAL_GUN_HEAT = 3.0
BOT_RADIUS = 18.0
BOT_DIAMETER = 36.0
RADAR_RADIUS = 1200.0
MAX_TURN_RATE = 10.0
MAX_GUN_TURN_RATE = 20.0
MAX_RADAR_TURN_RATE = 45.0
MAX_FORWARD_SPEED = 8.0
MAX_BACKWARD_SPEED = -8.0
ACCELERATION = 1.0
DECELERATION = -2.0
MIN_FIREPOWER = 0.1
MAX_FIREPOWER = 3.0
MAX_BULLET_SPEED = 19.7
RAM_DAMAGE = 0.6
BULLET_HIT_ENERGY_GAIN_FACTOR = 3.0
INACTIVITY_DAMAGE = 0.1
MAX_TEAM_MESSAGE_SIZE = 4096
MAX_NUMBER_OF_TEAM_MESSAGES_PER_TURN = 5
SCORE_PER_SURVIVAL = 50.0
BONUS_PER_LAST_SURVIVOR = 10.0
SCORE_PER_BULLET_DAMAGE = 1.0
BONUS_PER_BULLET_KILL = 0.20
SCORE_PER_RAM_DAMAGE = 2.0
BONUS_PER_RAM_KILL = 0.30
# Grid used for the initial placement (BotInitializer.kt).
PLACEMENT_CELL_SIZE = 50
# A bot with |energy| below this is disabled (`isNearTo(0.0)`).
DISABLED_EPSILON = 1e-6

DEG_TO_RAD = math.pi / 180.0  # what Java's Math.toRadians and Python's math.radians both multiply by


def clamp(value: float, lo: float, hi: float) -> float:
    """`clamp` of rules/math.kt: lo.coerceAtLeast(hi.coerceAtMost(value))."""
    if value > hi:
        value = hi
    return lo if value < lo else value


def normalize_absolute(angle: float) -> float:
    """Degrees into [0, 360), with Java's `%` (fmod: the sign of the dividend)."""
    a = math.fmod(angle, 360.0)
    return a if a >= 0 else a + 360.0


def normalize_relative(angle: float) -> float:
    """Degrees into [-180, 180)."""
    a = math.fmod(angle, 360.0)
    if a >= 0:
        return a if a < 180 else a - 360.0
    return a if a >= -180 else a + 360.0


def calc_new_bot_speed(current: float, target: float) -> float:
    """The server's speed update: +1 acceleration, -2 deceleration, an instant stop at target 0 and a
    reversal that gives `current/2 - 1` (8 -> 3.0). Negative speeds mirror positive ones."""
    if current < 0:
        return -_new_speed_from_non_negative(-current, -target)
    return _new_speed_from_non_negative(current, target)


def _new_speed_from_non_negative(current: float, target: float) -> float:
    if current > 0:
        if target > 0:
            diff = target - current
            if diff >= 0:
                speed = current + (diff if diff < ACCELERATION else ACCELERATION)
                return speed if speed < MAX_FORWARD_SPEED else MAX_FORWARD_SPEED
            speed = current + (diff if diff > DECELERATION else DECELERATION)
            return speed if speed > MAX_BACKWARD_SPEED else MAX_BACKWARD_SPEED
        if target == 0.0:
            return 0.0
        return (1.0 - current / 2) * -1.0
    step = -target if target < 0 else target
    if step > ACCELERATION:
        step = ACCELERATION
    if target >= 0:
        return step if step < MAX_FORWARD_SPEED else MAX_FORWARD_SPEED
    return -step if -step > MAX_BACKWARD_SPEED else MAX_BACKWARD_SPEED


def clamp_speed(speed: float) -> float:
    return clamp(speed, MAX_BACKWARD_SPEED, MAX_FORWARD_SPEED)


def clamp_firepower(firepower: float) -> float:
    return clamp(firepower, MIN_FIREPOWER, MAX_FIREPOWER)


def calc_max_turn_rate(speed: float) -> float:
    return MAX_TURN_RATE - 0.75 * abs(clamp_speed(speed))


def calc_wall_damage(speed: float) -> float:
    return max(abs(clamp_speed(speed)) / 2 - 1, 0.0)


def calc_bullet_speed(firepower: float) -> float:
    return 20 - 3 * clamp_firepower(firepower)


def calc_bullet_damage(firepower: float) -> float:
    damage = 4 * clamp_firepower(firepower)
    if firepower > 1:
        damage += 2 * (firepower - 1)
    return damage


def calc_gun_heat(firepower: float) -> float:
    return 1 + clamp_firepower(firepower) / 5
