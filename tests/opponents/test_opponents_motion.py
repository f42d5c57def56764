"""The blocking-move bookkeeping: a move of N units ends stopped on the spot under the server's speed rule."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from sacbot.engine.rules import calc_new_bot_speed
from sacbot.opponents.motion import (
    Motion,
    max_speed_for_distance,
    normalize_relative,
    target_speed_for_distance,
)


def drive(
    distance: float, speed: float = 0.0, max_speed: float = 8.0, turns: int = 400
) -> tuple[float, float, int]:
    """Drive a bot along x with Motion's intents; returns (position, final speed, turns until done)."""
    m = Motion()
    m.max_speed = max_speed
    x = 0.0
    m.observe(x, 0.0, 0.0, 0.0, 0.0, speed)
    m.distance = distance
    for turn in range(turns):
        if m.move_done:
            return x, speed, turn
        speed = calc_new_bot_speed(speed, m.next_target_speed())
        assert abs(speed) <= max_speed + 1e-9
        x += speed
        m.observe(x, 0.0, 0.0, 0.0, 0.0, speed)
    raise AssertionError(f"move of {distance} not done after {turns} turns (at {x}, speed {speed})")


def test_forward_100_from_rest_accelerates_and_stops_on_the_spot() -> None:
    x, speed, turns = drive(100.0)
    assert math.isclose(x, 100.0, abs_tol=1e-6)
    assert speed == 0.0
    assert turns < 20  # 8 of acceleration, then cruising and braking by 2


@given(st.floats(min_value=0.25, max_value=1000.0), st.sampled_from([1.0, 5.0, 8.0]))
def test_any_move_from_rest_ends_at_its_distance(distance: float, max_speed: float) -> None:
    for signed in (distance, -distance):
        x, speed, _ = drive(signed, max_speed=max_speed, turns=2000)
        assert math.isclose(x, signed, abs_tol=1e-6)
        assert speed == 0.0


@given(st.floats(min_value=-8.0, max_value=8.0), st.floats(min_value=-300.0, max_value=300.0))
def test_a_move_started_while_moving_still_ends_stopped_near_its_end(speed: float, distance: float) -> None:
    # Too fast for a short move the bot brakes as hard as it may (2/turn) and stops past the end, like the
    # official libraries; otherwise it stops on the spot.
    x, final, _ = drive(distance, speed=speed, turns=2000)
    assert final == 0.0
    braking = speed * speed / 4  # 8 -> 6 + 4 + 2 = 12 < 16
    if distance * speed >= 0 and abs(distance) >= braking + abs(speed):
        # 1e-5: Motion takes a move below that as done (a crumb of a move is no move).
        assert math.isclose(x, distance, abs_tol=1e-5)
    else:
        assert abs(x - distance) <= braking + 1.0


def test_stopping_distance_from_full_speed_is_12() -> None:
    assert max_speed_for_distance(12.0) == 6.0  # the next turn's speed: 6 + 4 + 2 = 12
    assert target_speed_for_distance(8.0, 12.0) == 6.0  # never more than 2 below the current speed
    assert target_speed_for_distance(0.0, 100.0) == 1.0  # never more than 1 above it


def test_turn_remaining_counts_observed_heading_changes_across_zero() -> None:
    m = Motion()
    m.observe(0, 0, 355.0, 0, 0, 0)
    m.turn = 20.0  # turn left 20: 355 -> 15
    assert m.next_turn_rate() == 10.0
    m.observe(0, 0, 5.0, 0, 0, 0)
    assert math.isclose(m.turn, 10.0)
    m.observe(0, 0, 15.0, 0, 0, 0)
    assert m.turn_done
    assert m.next_turn_rate() == 0.0


def test_continuous_rates_pass_through_and_clamp_speed() -> None:
    m = Motion()
    m.turn_rate, m.target_speed = -7.0, 12.0
    assert m.next_turn_rate() == -7.0
    assert m.next_target_speed() == 8.0
    m.max_speed = 5.0
    assert m.next_target_speed() == 5.0


def test_normalize_relative_range() -> None:
    assert normalize_relative(180.0) == -180.0
    assert normalize_relative(-181.0) == 179.0
    assert normalize_relative(720.0) == 0.0
