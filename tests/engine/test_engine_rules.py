"""The formulas of rules/math.kt, with values worked out by hand."""

from __future__ import annotations

import pytest

from sacbot.engine.rules import (
    calc_bullet_damage,
    calc_bullet_speed,
    calc_gun_heat,
    calc_max_turn_rate,
    calc_new_bot_speed,
    calc_wall_damage,
    normalize_absolute,
    normalize_relative,
)


def test_reversing_from_full_speed_gives_three() -> None:
    # cur/2 - 1 = 8/2 - 1 = 3.0: the server's zero-crossing rule, not the documented "-2 per turn".
    assert calc_new_bot_speed(8.0, -8.0) == 3.0
    assert calc_new_bot_speed(-8.0, 8.0) == -3.0


@pytest.mark.parametrize(("cur", "expected"), [(6.0, 2.0), (4.0, 1.0), (3.0, 0.5), (2.0, 0.0), (1.0, -0.5)])
def test_reversal_table(cur: float, expected: float) -> None:
    assert calc_new_bot_speed(cur, -8.0) == expected


def test_target_zero_stops_instantly() -> None:
    assert calc_new_bot_speed(8.0, 0.0) == 0.0
    assert calc_new_bot_speed(-5.5, 0.0) == 0.0


def test_acceleration_is_one_and_deceleration_two() -> None:
    assert calc_new_bot_speed(0.0, 8.0) == 1.0
    assert calc_new_bot_speed(0.0, -8.0) == -1.0
    assert calc_new_bot_speed(0.0, 0.4) == 0.4
    assert calc_new_bot_speed(5.0, 8.0) == 6.0
    assert calc_new_bot_speed(8.0, 5.0) == 6.0  # 8 - 2
    assert calc_new_bot_speed(8.0, 7.5) == 7.5
    assert calc_new_bot_speed(7.5, 100.0) == 8.0  # capped at 8
    assert calc_new_bot_speed(-6.0, -3.0) == -4.0


def test_bullet_formulas() -> None:
    assert calc_bullet_speed(3.0) == 11.0
    assert calc_bullet_speed(0.1) == pytest.approx(19.7)
    assert calc_bullet_damage(3.0) == 16.0  # 4*3 + 2*(3-1)
    assert calc_bullet_damage(2.0) == 10.0
    assert calc_bullet_damage(1.0) == 4.0
    assert calc_bullet_damage(0.1) == pytest.approx(0.4)
    assert calc_gun_heat(3.0) == 1.6
    assert calc_gun_heat(0.1) == 1.02


def test_wall_damage_and_turn_limit() -> None:
    assert calc_wall_damage(8.0) == 3.0  # 8/2 - 1
    assert calc_wall_damage(-6.0) == 2.0
    assert calc_wall_damage(2.0) == 0.0
    assert calc_max_turn_rate(8.0) == 4.0  # 10 - 0.75*8
    assert calc_max_turn_rate(0.0) == 10.0


def test_angle_normalisation_uses_java_remainder() -> None:
    assert normalize_absolute(-10.0) == 350.0
    assert normalize_absolute(725.0) == 5.0
    assert normalize_relative(190.0) == -170.0
    assert normalize_relative(-180.0) == -180.0
    assert normalize_relative(180.0) == -180.0
