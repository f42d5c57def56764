"""Features on hand-built TickEventForBot fixtures: state, walls, bearings, unseen enemy, rewards, intents."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sacbot.agent import features as F
from sacbot.agent.sizes import NetworkSizes
from sacbot.env.arena_env import TankRoyaleEnv
from sacbot.errors import UserError
from sacbot.protocol import (
    BotDeathEvent,
    BotHitBotEvent,
    BotHitWallEvent,
    BotIntent,
    BotState,
    BulletHitBotEvent,
    BulletHitWallEvent,
    BulletState,
    HitByBulletEvent,
    ScannedBotEvent,
    TickEventForBot,
    WonRoundEvent,
)

W, H = 800.0, 600.0
ME, ENEMY = 1, 2


def state(**kw: float) -> BotState:
    base: dict[str, float] = dict(
        energy=100.0,
        x=400.0,
        y=300.0,
        direction=0.0,
        gun_direction=0.0,
        radar_direction=0.0,
        radar_sweep=0.0,
        speed=0.0,
        turn_rate=0.0,
        gun_turn_rate=0.0,
        radar_turn_rate=0.0,
        gun_heat=0.0,
    )
    base.update(kw)
    return BotState(enemy_count=1, **base)  # type: ignore[arg-type]


def tick(bot_state: BotState, events: list | None = None, turn: int = 5) -> TickEventForBot:
    return TickEventForBot(
        turn_number=turn, round_number=1, bot_state=bot_state, bullet_states=[], events=events or []
    )


def scan(
    x: float, y: float, direction: float = 90.0, speed: float = 4.0, energy: float = 50.0, bot: int = ENEMY
):
    return ScannedBotEvent(
        turn_number=5,
        scanned_by_bot_id=ME,
        scanned_bot_id=bot,
        energy=energy,
        x=x,
        y=y,
        direction=direction,
        speed=speed,
    )


def bullet(owner: int, power: float) -> BulletState:
    return BulletState(bullet_id=1, owner_id=owner, power=power, x=0.0, y=0.0, direction=0.0)


def memory() -> F.RoundMemory:
    return F.RoundMemory(arena_width=W, arena_height=H, my_id=ME)


def test_own_entries_and_walls() -> None:
    m = memory()
    s = F.observe(tick(state(x=200.0, y=150.0, direction=270.0, speed=-4.0, gun_heat=1.5, energy=50.0)), m)
    assert s.dtype == np.float32 and s.shape == (17,)
    assert s[0] == pytest.approx(0.25) and s[1] == pytest.approx(0.25)
    assert s[2] == pytest.approx(-0.5)  # 270 deg = -90 deg
    assert s[3] == pytest.approx(-0.5) and s[6] == pytest.approx(0.5) and s[7] == pytest.approx(0.5)
    # north, south, east, west wall distances
    assert s[8:12] == pytest.approx([0.75, 0.25, 0.75, 0.25])


def test_headings_wrap_to_minus_one_one() -> None:
    m = memory()
    s = F.observe(tick(state(direction=180.0, gun_direction=359.0, radar_direction=90.0)), m)
    assert s[2] == pytest.approx(-1.0)  # 180 maps to -180
    assert s[4] == pytest.approx(-1.0 / 180.0)
    assert s[5] == pytest.approx(0.5)


def test_before_first_scan_values() -> None:
    m = memory()
    s = F.observe(tick(state()), m)
    assert tuple(s[12:17]) == pytest.approx(F.UNSEEN_ENEMY)
    assert not m.seen


def test_enemy_entries_and_bearing() -> None:
    m = memory()
    # enemy straight north of us while we face east: bearing +90 deg (counter-clockwise) -> +0.5
    s = F.observe(
        tick(state(direction=0.0), [scan(400.0, 500.0, direction=180.0, speed=-8.0, energy=150.0)]), m
    )
    assert s[12] == pytest.approx(200.0 / math.hypot(W, H))
    assert s[13] == pytest.approx(0.5)
    assert s[14] == pytest.approx(-1.0)
    assert s[15] == pytest.approx(-1.0)
    assert s[16] == pytest.approx(1.0)  # 150 energy is clipped
    # we turn to face north: the remembered enemy is now dead ahead
    s2 = F.observe(tick(state(direction=90.0), turn=6), m)
    assert s2[13] == pytest.approx(0.0)
    # enemy to our south-west while facing east: bearing -135 deg
    s3 = F.observe(tick(state(direction=0.0), [scan(300.0, 200.0)], turn=7), m)
    assert s3[13] == pytest.approx(-0.75)


def test_nearest_scan_wins_and_death_forgets() -> None:
    m = memory()
    F.observe(tick(state(), [scan(700.0, 300.0, bot=3), scan(450.0, 300.0, bot=2)]), m)
    assert m.enemy_id == 2
    s = F.observe(tick(state(), [BotDeathEvent(turn_number=6, victim_id=2)], turn=6), m)
    assert tuple(s[12:17]) == pytest.approx(F.UNSEEN_ENEMY)


def test_every_entry_in_range_on_random_ticks() -> None:
    rng = np.random.default_rng(1)
    m = memory()
    for turn in range(300):
        st = state(
            x=float(rng.uniform(-5, W + 5)),
            y=float(rng.uniform(-5, H + 5)),
            direction=float(rng.uniform(0, 360)),
            gun_direction=float(rng.uniform(0, 360)),
            radar_direction=float(rng.uniform(0, 360)),
            speed=float(rng.uniform(-8, 8)),
            gun_heat=float(rng.uniform(0, 3)),
            energy=float(rng.uniform(-1, 200)),
        )
        if rng.random() < 0.3:
            x, y = rng.uniform(0, 800, 2)
            events = [scan(float(x), float(y), float(rng.uniform(0, 360)))]
        else:
            events = []
        s = F.observe(tick(st, events, turn=turn), m)
        assert np.all(s >= -1.0) and np.all(s <= 1.0)


def test_reward_terms() -> None:
    m = memory()
    events = [
        BulletHitBotEvent(turn_number=5, victim_id=ENEMY, bullet=bullet(ME, 3.0), damage=16.0, energy=10.0),
        BulletHitBotEvent(turn_number=5, victim_id=ME, bullet=bullet(ENEMY, 1.0), damage=4.0, energy=90.0),
        BotHitWallEvent(turn_number=5, victim_id=ME),
        BulletHitWallEvent(turn_number=5, bullet=bullet(ME, 2.0)),
    ]
    assert F.reward(tick(state(), events), m) == pytest.approx(16.0 - 4.0 - 5.0 - 0.2)
    # hits between other bots count for nothing
    other = BulletHitBotEvent(turn_number=5, victim_id=3, bullet=bullet(ENEMY, 1.0), damage=4.0, energy=1.0)
    assert F.reward(tick(state(), [other]), m) == 0.0
    assert (
        F.reward(
            tick(state(), [HitByBulletEvent(turn_number=5, bullet=bullet(2, 1), damage=4.0, energy=9)]), m
        )
        == -4.0
    )


def test_terminal_rewards_count_once() -> None:
    m = memory()
    assert F.reward(tick(state(), [WonRoundEvent(turn_number=9)]), m) == 20.0
    assert F.round_end_reward(m) == 0.0
    m.new_round()
    assert F.reward(tick(state(), [BotDeathEvent(turn_number=9, victim_id=ME)]), m) == -10.0
    assert F.round_end_reward(m) == 0.0
    m.new_round()
    assert F.round_end_reward(m) == -10.0  # ended without a win reaching us
    assert F.round_end_reward(m) == 0.0


def test_aim_shaping_is_off_by_default_and_potential_based_when_on() -> None:
    # Off (the default): an aimed gun earns nothing.
    m = memory()
    aimed = tick(state(gun_direction=90.0), [scan(400.0, 500.0)])  # enemy due north, gun pointing north
    F.observe(aimed, m)
    assert F.reward(aimed, m) == 0.0 and F.round_end_reward(m) == -10.0
    # On: F = gamma * Phi(s') - Phi(s), Phi = k * cos(gun heading - bearing); Phi = 0 at start and end.
    k, g = 0.5, F.SHAPING_GAMMA
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, aim_shaping=k)
    m.new_round()
    F.observe(aimed, m)
    assert F.reward(aimed, m) == pytest.approx(g * k)  # from Phi 0 (no enemy yet) to Phi k
    away = tick(state(gun_direction=270.0), turn=6)  # the gun turned to point south, away from it
    F.observe(away, m)
    assert F.reward(away, m) == pytest.approx(g * -k - k)
    side = tick(state(gun_direction=0.0), [WonRoundEvent(turn_number=7)], turn=7)  # 90 deg off: Phi 0
    F.observe(side, m)
    assert F.reward(side, m) == pytest.approx(20.0 + 0.0 + k)
    assert F.round_end_reward(m) == pytest.approx(0.0)  # Phi was 0: the step to the terminal 0 is 0
    # A round that ends while aimed gives back Phi, so shaping sums to ~0 over any round (no free reward).
    m.new_round()
    F.observe(aimed, m)
    total = F.reward(aimed, m) + F.round_end_reward(m)
    assert total == pytest.approx(g * k - k - 10.0)


def test_close_shaping_pays_each_step_toward_the_enemy_and_adds_to_aim_shaping() -> None:
    # Off (the default): closing in earns nothing.
    m = memory()
    far = tick(state(x=400.0, y=100.0, gun_direction=90.0), [scan(400.0, 500.0)])  # enemy 400 north
    F.observe(far, m)
    assert F.reward(far, m) == 0.0
    # On: Phi = k * (1 - distance / diagonal), 0 before the first scan and at the round's end.
    k, g, diag = 2.0, F.SHAPING_GAMMA, math.hypot(W, H)  # diagonal 1000
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, close_shaping=k)
    m.new_round()
    F.observe(far, m)
    phi_far = k * (1 - 400.0 / diag)
    assert F.reward(far, m) == pytest.approx(g * phi_far)
    near = tick(state(x=400.0, y=400.0), turn=6)  # 300 closer; the enemy is remembered where it was seen
    F.observe(near, m)
    phi_near = k * (1 - 100.0 / diag)
    assert F.reward(near, m) == pytest.approx(g * phi_near - phi_far)
    assert F.round_end_reward(m) == pytest.approx(-phi_near - 10.0)  # the potential given back, and the loss
    # Both on: one potential, their sum (aimed gun: the aim part is its k).
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, aim_shaping=0.5, close_shaping=k)
    m.new_round()
    F.observe(far, m)
    assert F.reward(far, m) == pytest.approx(g * (0.5 + phi_far))


def test_action_mapping_is_complete() -> None:
    m = memory()
    F.observe(tick(state()), m)
    intent = F.action_to_intent(np.array([1.0, -0.5, 0.25, 0.5], np.float32), "spin", m)
    assert isinstance(intent, BotIntent)
    assert intent.turn_rate == pytest.approx(10.0)
    assert intent.target_speed == pytest.approx(-4.0)
    assert intent.gun_turn_rate == pytest.approx(5.0)
    assert intent.firepower == pytest.approx(1.5)
    assert intent.radar_turn_rate == 45.0
    for name in (
        "turn_rate",
        "gun_turn_rate",
        "radar_turn_rate",
        "target_speed",
        "firepower",
        "rescan",
        "adjust_gun_for_body_turn",
        "adjust_radar_for_body_turn",
        "adjust_radar_for_gun_turn",
        "fire_assist",
    ):
        assert getattr(intent, name) is not None, name
    # no shot at or below 0.1 power, nor for a negative a3; out-of-range actions are clipped
    assert F.action_to_intent(np.array([0, 0, 0, 0.03]), "spin", m).firepower == 0.0
    assert F.action_to_intent(np.array([0, 0, 0, -1.0]), "spin", m).firepower == 0.0
    assert F.action_to_intent(np.array([5, -5, 9, 9]), "spin", m).turn_rate == pytest.approx(10.0)


def test_with_the_gun_offset_the_gun_entry_is_where_the_gun_points_from_the_enemys_bearing() -> None:
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, gun_offset=True)
    # Before the first scan there is no bearing: the entry is a turn, as without the offset.
    F.observe(tick(state(gun_direction=50.0)), m)
    assert F.action_to_intent(np.array([0, 0, 0.25, 0]), "spin", m).gun_turn_rate == pytest.approx(5.0)
    # The enemy due north (bearing 90), the gun at 80: entry 0 turns onto the bearing, 0.2 onto 90 + 9.
    F.observe(tick(state(gun_direction=80.0), [scan(400.0, 500.0)]), m)
    assert F.action_to_intent(np.zeros(4), "spin", m).gun_turn_rate == pytest.approx(10.0)
    assert F.action_to_intent(np.array([0, 0, 0.2, 0]), "spin", m).gun_turn_rate == pytest.approx(19.0)
    assert F.action_to_intent(np.array([0, 0, -0.2, 0]), "spin", m).gun_turn_rate == pytest.approx(1.0)
    # Farther than a turn reaches: 20 degrees a turn, the short way round (across +-180 too).
    assert F.action_to_intent(np.array([0, 0, 1.0, 0]), "spin", m).gun_turn_rate == pytest.approx(20.0)
    F.observe(tick(state(gun_direction=100.0), [scan(400.0, 500.0)], turn=6), m)
    assert F.action_to_intent(np.array([0, 0, -1.0, 0]), "spin", m).gun_turn_rate == pytest.approx(-20.0)
    F.observe(tick(state(gun_direction=-170.0), [scan(300.0, 310.0)], turn=7), m)  # bearing about 174
    assert F.action_to_intent(np.zeros(4), "spin", m).gun_turn_rate == pytest.approx(-16.0, abs=0.3)


def test_radar_lock_turns_toward_last_scan() -> None:
    m = memory()
    # enemy due north; radar points east: lock turns left (positive), at most 45
    F.observe(tick(state(radar_direction=0.0), [scan(400.0, 500.0)]), m)
    assert F.action_to_intent(np.zeros(4), "lock", m).radar_turn_rate == pytest.approx(45.0)
    # radar almost on it (10 deg short, to the right of it): turns 10 deg plus the overshoot
    F.observe(tick(state(radar_direction=80.0), [scan(400.0, 500.0)], turn=6), m)
    rtr = F.action_to_intent(np.zeros(4), "lock", m).radar_turn_rate
    assert rtr is not None and 10.0 < rtr < 25.0
    # radar past it: turns back (negative)
    F.observe(tick(state(radar_direction=100.0), [scan(400.0, 500.0)], turn=7), m)
    rtr = F.action_to_intent(np.zeros(4), "lock", m).radar_turn_rate
    assert rtr is not None and rtr < 0.0
    # no fresh scan: spins in the last direction
    F.observe(tick(state(radar_direction=100.0), turn=12), m)
    assert F.action_to_intent(np.zeros(4), "lock", m).radar_turn_rate == -45.0


@pytest.mark.parametrize("body", [-170.0, 0.0, 95.0, 179.0])
@pytest.mark.parametrize("gun_off", [0.0, 90.0, -30.0, 179.0])
def test_angle_inputs_give_the_gun_error_and_the_enemy_motion_smoothly(body: float, gun_off: float) -> None:
    # The enemy sits at 30 degrees (counter-clockwise from east) from us, heading 120 (90 across our line).
    bearing = 30.0
    ex, ey = 400.0 + 200.0 * math.cos(math.radians(bearing)), 300.0 + 200.0 * math.sin(math.radians(bearing))
    m = memory()
    gun = bearing - gun_off
    s = F.observe(tick(state(direction=body, gun_direction=gun % 360.0), [scan(ex, ey, direction=120.0)]), m)
    columns = F.network_inputs(s, NetworkSizes(angle_inputs=True))
    assert columns.shape == (25,) and columns.dtype == np.float32
    assert np.array_equal(columns[:17], s)
    aim_sin, aim_cos, rel_sin, rel_cos, across_sin, across_cos, body_sin, body_cos = columns[17:]
    # the gun's error to the bearing, whatever the body heading and however the angles wrap
    assert aim_sin == pytest.approx(math.sin(math.radians(gun_off)), abs=1e-5)
    assert aim_cos == pytest.approx(math.cos(math.radians(gun_off)), abs=1e-5)
    assert rel_sin == pytest.approx(math.sin(math.radians(bearing - body)), abs=1e-5)
    assert rel_cos == pytest.approx(math.cos(math.radians(bearing - body)), abs=1e-5)
    assert across_sin == pytest.approx(1.0, abs=1e-5)  # heading 120 = 90 to the left of the line of sight
    assert across_cos == pytest.approx(0.0, abs=1e-5)
    assert body_sin == pytest.approx(math.sin(math.radians(body)), abs=1e-5)
    assert body_cos == pytest.approx(math.cos(math.radians(body)), abs=1e-5)


def test_angle_inputs_are_the_same_for_numpy_and_torch_and_batches() -> None:
    import torch

    states = np.random.default_rng(0).uniform(-1, 1, (3, 5, 17)).astype(np.float32)
    both = NetworkSizes(angle_inputs=True, energy_inputs=True)
    batched = F.network_inputs(states, both)
    assert batched.shape == (3, 5, 27) and both.input_dim == 27
    assert np.allclose(batched[1, 2], F.network_inputs(states[1, 2], both))
    t = torch.from_numpy(states)
    columns = torch.stack(F.input_columns(t, both, torch), -1).numpy()
    assert np.allclose(columns, batched[..., 17:], atol=1e-5)
    assert np.array_equal(F.network_inputs(states, NetworkSizes()), states)  # none on: the state itself


@pytest.mark.parametrize("across", [90.0, -90.0, 180.0])
@pytest.mark.parametrize("gun_off", [0.0, 70.0, -150.0])
def test_lead_inputs_point_where_a_linear_aim_hits(across: float, gun_off: float) -> None:
    """An enemy 400 away (power 1: bullets of 17 a turn) crossing our line of sight at full speed is led by
    about the largest escape angle, asin(8 / 17), to the side it moves to, and a bullet fired along that aim
    meets it; one driving along the line is aimed at head-on. The columns give the gun's error to the aim
    smoothly, the teacher's gun turn is the same aim, and numpy, torch and plain floats agree."""
    import torch

    from sacbot.agent.teacher import teacher_action

    bearing = math.radians(30.0)
    x, y = 150.0, 120.0
    ex, ey = x + 400.0 * math.cos(bearing), y + 400.0 * math.sin(bearing)
    heading = (30.0 + across) % 360.0
    gun = (30.0 - gun_off) % 360.0
    s = F.observe(
        tick(state(x=x, y=y, gun_direction=gun), [scan(ex, ey, direction=heading, speed=8.0)]), memory()
    )
    sizes = NetworkSizes(lead_inputs=True)
    assert sizes.input_dim == 21
    columns = F.network_inputs(s, sizes)
    assert columns.shape == (21,) and np.array_equal(columns[:17], s)
    err_sin, err_cos, lead, escape = columns[17:]
    assert err_sin**2 + err_cos**2 == pytest.approx(1.0, abs=1e-5)
    assert escape == pytest.approx(math.asin(8.0 / 17.0) / (math.pi / 4.0), abs=1e-5)
    aim = gun + math.degrees(math.atan2(err_sin, err_cos))
    if across == 180.0:  # along the line of sight: the aim is the bearing
        assert lead == pytest.approx(0.0, abs=1e-4)
        assert wrap(aim - 30.0) == pytest.approx(0.0, abs=1e-3)
    else:  # across it: most of the escape angle, to the side it goes (+: counter-clockwise)
        assert 0.8 < lead * math.copysign(1.0, across) <= 1.0
    # A bullet fired along the aim next turn (the intent acts then) meets the enemy on its straight path.
    d, h = math.radians(aim), math.radians(heading)
    closest = min(
        math.hypot(x + 17.0 * k * math.cos(d) - ex - 8.0 * (k + 1) * math.cos(h),
                   y + 17.0 * k * math.sin(d) - ey - 8.0 * (k + 1) * math.sin(h))
        for k in range(1, 60)
    )  # fmt: skip
    assert closest < F.BOT_DIAMETER / 2.0
    # the teacher's gun turn is the same aim (clipped to one turn of the gun)
    teacher_gun = float(teacher_action(torch.from_numpy(s)[None])[0, 2])
    assert teacher_gun == pytest.approx(max(-1.0, min(1.0, wrap(aim - gun) / 20.0)), abs=1e-5)
    t = torch.stack(F.input_columns(torch.from_numpy(s), sizes, torch), -1).numpy()
    floats = F.lead_inputs_of(F.FLOAT_MATH, *(float(s[i]) for i in (0, 1, 2, 4, 7, 12, 13, 14, 15)))
    assert np.allclose(t, columns[17:], atol=1e-5) and np.allclose(floats, columns[17:], atol=1e-5)
    everything = NetworkSizes(angle_inputs=True, energy_inputs=True, lead_inputs=True)
    assert np.allclose(
        F.network_inputs(s, everything)[27:], columns[17:]
    )  # after the angle and energy inputs


def wrap(angle: float) -> float:
    return (angle + 180.0) % 360.0 - 180.0


@pytest.mark.parametrize("power", [0.1, 1.0, 2.0, 3.0])
def test_energy_inputs_turn_when_the_enemy_fires(power: float) -> None:
    """The enemy's energy drop of a shot turns the energy phase by 360 * power / ENERGY_PERIOD degrees, a
    step the networks see; the energy inputs sit after the angle inputs."""
    m = memory()
    before = F.observe(tick(state(), [scan(600.0, 300.0, energy=73.4)]), m)
    after = F.observe(tick(state(), [scan(600.0, 300.0, energy=73.4 - power)]), m)
    sizes = NetworkSizes(energy_inputs=True)
    (s0, c0), (s1, c1) = (F.network_inputs(s, sizes)[17:] for s in (before, after))
    assert s0**2 + c0**2 == pytest.approx(1.0, abs=1e-5)
    turned = math.degrees(math.atan2(s1 * c0 - c1 * s0, c1 * c0 + s1 * s0)) % 360.0
    assert turned == pytest.approx(360.0 - 360.0 * power / F.ENERGY_PERIOD, abs=0.01)
    widened = F.network_inputs(after, NetworkSizes(angle_inputs=True, energy_inputs=True))
    assert np.allclose(widened[25:], (s1, c1)) and np.array_equal(widened[:17], after)


def _shot(x: float, y: float, direction: float, power: float = 2.0, bullet_id: int = 1) -> BulletState:
    return BulletState(bullet_id=bullet_id, owner_id=ME, power=power, x=x, y=y, direction=direction)


def _bullet_tick(bullets: list[BulletState], enemy: tuple[float, float, float, float]) -> np.ndarray:
    """Bullet inputs of a tick that scans the enemy at (x, y) with its heading and speed."""
    m = memory()
    t = tick(state(x=100.0, y=300.0), [scan(enemy[0], enemy[1], direction=enemy[2], speed=enemy[3])])
    t.bullet_states = bullets
    F.observe(t, m)
    return F.bullet_inputs(t, m)


def test_bullet_inputs_say_where_a_shot_passes_the_enemy() -> None:
    diag = math.hypot(W, H)
    # A bullet 300 units west of the enemy, flying east: the enemy lies 300 ahead, on the path. It moves
    # north (90 degrees) at 8: across the path, to the bullet's left (positive offset side).
    on = _bullet_tick([_shot(300.0, 300.0, 0.0, power=1.5)], (600.0, 300.0, 90.0, 8.0))
    assert on.shape == (18,) and on.dtype == np.float32
    assert on[:6] == pytest.approx([1.0, 300.0 / diag, 0.0, 0.5, 1.0, 0.0], abs=1e-6)
    assert not on[6:].any()  # the other slots stay empty
    # The enemy 50 units north of the path, moving along it (east): offset 0.5, velocity along +1.
    off = _bullet_tick([_shot(300.0, 300.0, 0.0)], (600.0, 350.0, 0.0, 8.0))
    assert off[1:6] == pytest.approx([300.0 / diag, 0.5, 2.0 / 3.0, 0.0, 1.0], abs=1e-6)
    # Aimed the other way: the enemy lies behind it (along < 0), south of its path as seen flying west.
    behind = _bullet_tick([_shot(300.0, 300.0, 180.0)], (600.0, 350.0, 0.0, 8.0))
    assert behind[1] < 0.0 and behind[2] == pytest.approx(-0.5, abs=1e-6) and behind[5] == pytest.approx(-1.0)


def test_bullet_inputs_keep_the_three_nearest_bullets_still_on_their_way() -> None:
    enemy = (600.0, 300.0, 0.0, 0.0)
    passed = _shot(620.0, 300.0, 0.0, bullet_id=1)  # 20 past the enemy: last, though nearest
    near = _shot(500.0, 300.0, 0.0, bullet_id=2)
    mid = _shot(400.0, 300.0, 0.0, bullet_id=3)
    far = _shot(200.0, 300.0, 0.0, bullet_id=4)
    v = _bullet_tick([far, passed, mid, near], enemy).reshape(3, 6)
    diag = math.hypot(W, H)
    assert v[:, 1] == pytest.approx([100.0 / diag, 200.0 / diag, 400.0 / diag], abs=1e-6)
    two = _bullet_tick([passed, near], enemy).reshape(3, 6)
    assert two[:, 0].tolist() == [1.0, 1.0, 0.0] and two[1, 1] == pytest.approx(-20.0 / diag, abs=1e-6)


def test_bullet_inputs_are_zero_before_the_first_scan_and_without_bullets() -> None:
    m = memory()
    t = tick(state())
    t.bullet_states = [_shot(300.0, 300.0, 0.0)]
    F.observe(t, m)  # no scan: nothing to place the bullet against
    assert not F.bullet_inputs(t, m).any()
    assert not _bullet_tick([], (600.0, 300.0, 0.0, 0.0)).any()
    out = np.full(18, 7.0, np.float32)
    assert F.bullet_inputs(t, m, out) is out and not out.any()


def _wave_game(m: F.RoundMemory, heading_after: float, speed: float, first_turn: int = 1) -> np.ndarray:
    """We stand at (100, 300); the enemy, 400 east, moves north at `speed` when we fire east (power 2, speed
    14), then heads `heading_after` at `speed` until our shot's wave passes it. The wave inputs of the tick
    after it passed."""
    out = np.zeros(0, np.float32)
    before = sum(m.wave_bins)
    ex, ey = 500.0, 300.0
    for k in range(60):
        heading = 90.0 if k == 0 else heading_after
        t = tick(state(x=100.0, y=300.0), [scan(ex, ey, direction=heading, speed=speed)], turn=first_turn + k)
        if k >= 1:  # fired on the first turn: listed from the next one, 14 further along each turn
            t.bullet_states = [_shot(100.0 + 14.0 * k, 300.0, 0.0, power=2.0)]
        F.observe(t, m)
        out = F.wave_inputs(t, m)
        if sum(m.wave_bins) != before:  # recorded
            return out
        ex += speed * math.cos(math.radians(heading_after))
        ey += speed * math.sin(math.radians(heading_after))
    raise AssertionError("the wave never reached the enemy")


@pytest.mark.parametrize(
    ("heading_after", "speed", "bin_", "sideways", "peak"),
    [
        (90.0, 8.0, 8, 1.0, 8 / 9),  # went on at full speed: guess factor ~ +1 (the last bin)
        (270.0, 8.0, 0, -1.0, 8 / 9),  # turned back at full speed: ~ -1; the peak lies ahead of it now
        (90.0, 0.0, 4, 0.0, 0.0),  # stood still: 0, the middle bin (a head-on shot hits)
    ],
)
def test_a_wave_records_where_the_enemy_was_when_the_shot_reached_it(
    heading_after: float, speed: float, bin_: int, sideways: float, peak: float
) -> None:
    v = _wave_game(memory(), heading_after, speed)
    assert v.shape == (12,) and v.dtype == np.float32
    assert v[0] == pytest.approx(1.0 / 6.0)  # one wave: weight 1, confidence 1 / (1 + 5)
    assert v[1:10].tolist() == [1.0 if i == bin_ else 0.0 for i in range(9)]
    # Sideways now: all of its speed less the turn of the line of sight (33 degrees when it went on).
    assert np.sign(v[10]) == sideways and (sideways == 0.0 or 0.8 < abs(v[10]) <= 1.0)
    assert v[11] == pytest.approx(peak, abs=1e-6)


def test_the_wave_record_lasts_the_game_and_forgets_slowly() -> None:
    m = memory()
    _wave_game(m, 90.0, 8.0)
    m.new_round()  # a new round keeps the game's record ...
    v = _wave_game(m, 270.0, 8.0)
    assert v[0] == pytest.approx(1.97 / 6.97, abs=1e-6)  # two waves: the first weighs 0.97
    assert v[1] == pytest.approx(1.0 / 1.97, abs=1e-6) and v[9] == pytest.approx(0.97 / 1.97, abs=1e-6)
    m.new_game()  # ... a new game (maybe another enemy) does not
    assert m.wave_bins == [0.0] * 9 and not m.waves
    t = tick(state(x=100.0, y=300.0), [scan(500.0, 300.0, direction=90.0, speed=8.0)])
    F.observe(t, m)
    assert F.wave_inputs(t, m)[:10].tolist() == [0.0] * 10


def test_a_shorter_wave_memory_forgets_faster() -> None:
    """`RoundMemory.wave_decay` (`NetworkSizes.wave_decay`): each wave weighs that of the next."""
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, wave_decay=0.5)
    _wave_game(m, 90.0, 8.0)
    m.new_round()
    v = _wave_game(m, 270.0, 8.0)
    assert v[0] == pytest.approx(1.5 / 6.5, abs=1e-6)  # two waves: the first weighs 0.5
    assert v[1] == pytest.approx(1.0 / 1.5, abs=1e-6) and v[9] == pytest.approx(0.5 / 1.5, abs=1e-6)
    assert m.threat_bins == [0.0] * 9  # the hit record keeps its own decay (no hits here)


def test_the_virtual_aim_takes_the_linear_aim_once_it_has_hit_more_of_our_waves() -> None:
    """`RoundMemory.wave_aim` "virtual" (`NetworkSizes.wave_aim`): each wave keeps what a linear aim and the
    histogram's peak pointed at when it was fired; where it reaches the enemy, each scores a hit if the
    enemy's guess factor lies within half a bot of its own. Entry 11 is the linear aim's factor now (the lead
    inputs' entry 2, clipped) while its count is ahead, otherwise the peak."""
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, wave_aim="virtual")
    v = _wave_game(m, 90.0, 8.0)  # it went on as it moved: the linear aim hits, the peak (head-on) misses
    assert m.gun_hits == [1.0, 0.0]
    plain = _wave_game(memory(), 90.0, 8.0)
    assert plain[11] == pytest.approx(8 / 9, abs=1e-6) and v[:11].tolist() == plain[:11].tolist()
    s = F.encode_state(state(x=100.0, y=300.0), m)
    lead = F.lead_inputs_of(F.FLOAT_MATH, *(float(s[i]) for i in (0, 1, 2, 4, 7, 12, 13, 14, 15)))
    assert v[11] == pytest.approx(max(-1.0, min(1.0, lead[2])), abs=1e-5) and v[11] != pytest.approx(8 / 9)

    turned = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, wave_aim="virtual")
    v = _wave_game(turned, 270.0, 8.0)  # it turned back: both miss, and the peak stays the aim
    assert turned.gun_hits == [0.0, 0.0] and v[11] == pytest.approx(8 / 9, abs=1e-6)
    m.new_game()
    assert m.gun_hits == [0.0, 0.0] and m.wave_aim == "virtual"
    with pytest.raises(ValueError, match="wave_aim"):
        NetworkSizes(wave_aim="best")  # type: ignore[arg-type]


def test_a_new_game_forgets_the_records_and_keeps_the_memorys_settings() -> None:
    """`RoundMemory.start_game`: the arena's size and our id of the new game, the wave record cleared; the
    shapings, gun offset and wave decay the memory was made with stay (play, exported bots, the league)."""
    m = F.RoundMemory(
        arena_width=W, arena_height=H, my_id=ME, wave_decay=0.5, gun_offset=True, aim_shaping=2.0
    )
    _wave_game(m, 90.0, 8.0)
    assert any(m.wave_bins)
    m.start_game(1000.0, 1000.0, 7)
    assert (m.arena_width, m.arena_height, m.my_id) == (1000.0, 1000.0, 7)
    assert m.diagonal == pytest.approx(math.hypot(1000.0, 1000.0))
    assert m.wave_bins == [0.0] * 9 and m.threat_bins == [0.0] * 9 and not m.waves and not m.seen
    assert (m.wave_decay, m.gun_offset, m.aim_shaping) == (0.5, True, 2.0)


def test_no_wave_starts_before_the_enemy_is_seen_and_a_round_drops_the_waves_in_flight() -> None:
    m = memory()
    t = tick(state(x=100.0, y=300.0), turn=1)
    t.bullet_states = [_shot(114.0, 300.0, 0.0)]
    F.observe(t, m)
    assert not F.wave_inputs(t, m).any() and not m.waves  # a shot at nobody seen: no wave
    t = tick(state(x=100.0, y=300.0), [scan(500.0, 300.0)], turn=2)
    F.observe(t, m)
    F.wave_inputs(t, m)
    t = tick(state(x=100.0, y=300.0), [scan(500.0, 300.0)], turn=3)
    t.bullet_states = [_shot(114.0, 300.0, 0.0, bullet_id=2)]
    F.observe(t, m)
    F.wave_inputs(t, m)
    assert len(m.waves) == 1 and m.waves[0][:3] == (100.0, 300.0, 2.0)  # fired last turn, from 14 back
    m.new_round()
    assert not m.waves and m.wave_bullet_ids == []


def _enemy_bullet(power: float, direction: float, owner: int = ENEMY) -> BulletState:
    return BulletState(bullet_id=9, owner_id=owner, power=power, x=100.0, y=300.0, direction=direction)


def _threats(
    m: F.RoundMemory, turn: int, energy: float, events: list | None = None, **me: float
) -> np.ndarray:
    """The threat inputs of a tick at `turn` that scans the enemy at (500, 300) with `energy`; we stand at
    (100, 300) unless `me` says otherwise (state fields)."""
    pose: dict[str, float] = {"x": 100.0, "y": 300.0, **me}
    t = tick(state(**pose), [scan(500.0, 300.0, energy=energy), *(events or [])], turn=turn)
    F.observe(t, m)
    return F.threat_inputs(t, m)


def test_an_energy_drop_starts_an_enemy_wave_that_reaches_us_and_passes() -> None:
    m = memory()
    v = _threats(m, 1, 50.0)
    assert v.shape == (15,) and v.dtype == np.float32
    assert v.tolist() == [0.0, 1.0] + [0.0] * 13  # nothing in flight, no hits yet
    v = _threats(m, 2, 48.0)  # a drop of 2: a power-2 shot (speed 14) from where it stood at turn 1
    assert len(m.threats) == 1 and m.threats[0][:4] == (500.0, 300.0, 1.0, 14.0)
    assert v[0] == pytest.approx(1.0 / 3.0)
    assert v[1] == pytest.approx((400.0 - 14.0) / 14.0 / 40.0, abs=1e-6)  # turns until it reaches us / 40
    assert v[2] == pytest.approx(0.0, abs=1e-6) and v[3] == pytest.approx(2.0 / 3.0)  # on its line; power 2
    for turn in range(3, 31):  # on us at turn 30 (radius 14 * 29 = 406), past us (beyond 400 + 18) at 31
        v = _threats(m, turn, 48.0)
    assert len(m.threats) == 1 and v[1] == 0.0
    v = _threats(m, 31, 48.0)
    assert not m.threats and v[0] == 0.0 and v[1] == 1.0


def test_our_guess_factor_on_an_enemy_wave_follows_our_move_signed_by_our_direction_then() -> None:
    m = memory()
    _threats(m, 1, 50.0, direction=90.0, speed=8.0)  # moving north: clockwise about the enemy (east of us)
    _threats(m, 2, 47.0, direction=90.0, speed=8.0)  # a power-3 shot (speed 11)
    escape = math.asin(8.0 / 11.0)
    y = 300.0 + 400.0 * math.tan(escape)  # the most a bot can cover: guess factor 1 on the way we went
    v = _threats(m, 3, 47.0, y=y)
    assert v[2] == pytest.approx(1.0, abs=1e-4)
    v = _threats(m, 4, 47.0, y=300.0 - 200.0 * math.tan(escape))  # the other way, half as far
    assert -0.6 < v[2] < -0.4


@pytest.mark.parametrize(
    "event",
    [
        BulletHitBotEvent(
            turn_number=2,
            victim_id=ENEMY,
            bullet=_shot(480.0, 300.0, 0.0, power=0.5),
            damage=2.0,
            energy=48.0,
        ),
        BotHitBotEvent(turn_number=2, victim_id=ENEMY, bot_id=ME, energy=48.0, x=500.0, y=300.0, rammed=True),
    ],
    ids=["our hit", "a ram"],
)
def test_an_energy_drop_that_our_hit_or_a_ram_explains_starts_no_wave(event: object) -> None:
    """A ram shows in the scan of its turn; a bullet's hit in the next turn's scan (a turn scans before its
    bullets hit)."""
    m = memory()
    _threats(m, 1, 50.0)
    if isinstance(event, BulletHitBotEvent):
        _threats(m, 2, 50.0, [event])
        _threats(m, 3, 48.0)
    else:
        _threats(m, 2, 49.4, [event])
    assert not m.threats
    _threats(
        m, 4, 47.4 if isinstance(event, BulletHitBotEvent) else 48.4
    )  # a shot of 0.6 or of 1 still shows
    assert len(m.threats) == 1


def test_a_hit_on_us_records_our_guess_factor_by_the_bullet_and_lasts_the_game() -> None:
    m = memory()
    _threats(m, 1, 50.0, direction=90.0, speed=8.0)
    _threats(m, 2, 48.0, direction=90.0, speed=8.0)  # a power-2 wave, we clockwise about the enemy
    escape = math.degrees(math.asin(8.0 / 14.0))
    # At turn 30 the wave (radius 14 * 29 = 406) is on us. Its bullet flew at 180 - escape degrees: from the
    # enemy's bearing to us then (180), the full escape angle the way we were going (north: clockwise about
    # the enemy, the bearing falls).
    hit = HitByBulletEvent(
        turn_number=30, bullet=_enemy_bullet(2.0, 180.0 - escape), damage=10.0, energy=90.0
    )
    # The enemy fires again (power 1: 48 - 1); the 3 * 2 it gains by the hit shows a turn later.
    v = _threats(m, 30, 47.0, [hit])
    assert v[4] == pytest.approx(1.0 / 4.0)  # one hit: confidence 1 / (1 + 3)
    assert v[5:14].tolist() == [0.0] * 8 + [1.0]  # guess factor 1: the last bin
    assert len(m.threats) == 1 and m.threats[0][3] == pytest.approx(17.0)  # the hit's wave gone, a new one
    _threats(m, 31, 53.0)
    assert len(m.threats) == 1  # the gain is no shot
    m.new_round()
    assert not m.threats and m.threat_bins[8] == 1.0  # a round drops the waves, keeps the record
    m.new_game()
    assert m.threat_bins == [0.0] * 9


def test_a_memory_for_sizes_keeps_its_records_by_their_meanings() -> None:
    """`RoundMemory.for_sizes` takes the gun entry's meaning, the wave record's decay and aim and the threat
    record's visits from the networks' sizes, the shapings and the arena from its arguments."""
    sizes = NetworkSizes(gun_offset=True, wave_decay=0.5, wave_aim="virtual", threat_visits=0.3)
    m = F.RoundMemory.for_sizes(sizes, 1000.0, 800.0, ME, aim_shaping=1.0, surf_shaping=2.0)
    assert (m.gun_offset, m.wave_decay, m.wave_aim, m.threat_visits) == (True, 0.5, "virtual", 0.3)
    assert (m.aim_shaping, m.close_shaping, m.surf_shaping) == (1.0, 0.0, 2.0)
    assert (m.arena_width, m.arena_height, m.my_id) == (1000.0, 800.0, ME)
    plain = F.RoundMemory.for_sizes(NetworkSizes())
    assert (plain.gun_offset, plain.wave_decay, plain.wave_aim, plain.threat_visits) == (
        False,
        F.WAVE_DECAY,
        "peak",
        0.0,
    )
    assert (plain.arena_width, plain.arena_height, plain.my_id) == (800.0, 600.0, None)


@pytest.mark.parametrize("visits", [0.0, 0.3])
def test_a_wave_that_passes_us_unhit_adds_where_we_were_by_the_enemys_hit_rate(visits: float) -> None:
    """With `threat_visits`, each enemy wave that reaches us unhit records our guess factor on it in a
    histogram of visits; the inputs' shares mix it in at that weight times the enemy's hit rate on us over
    15% (at most 1): nothing while it has never hit us. The hits' histogram and confidence stay as they
    are."""
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, threat_visits=visits)
    _threats(m, 1, 50.0)
    _threats(m, 2, 48.0)  # a power-2 wave from 400 away; we stand on its line: guess factor 0 (bin 4)
    for turn in range(3, 32):  # on us at turn 30, unhit
        v = _threats(m, turn, 48.0)
    assert m.threat_bins == [0.0] * 9 and not v[4:].any()  # no hit yet: no shares
    assert m.threat_visits_bins == ([0.0] * 4 + [1.0] + [0.0] * 4 if visits else [0.0] * 9)
    assert m.threat_passed == (1.0 if visits else 0.0)
    escape = math.degrees(math.asin(8.0 / 17.0))
    _threats(m, 32, 47.0)  # a power-1 wave (speed 17)
    hit = HitByBulletEvent(  # its bullet hits us at guess factor 1 (last bin; standing, the sign is +1)
        turn_number=55, bullet=_enemy_bullet(1.0, 180.0 + escape), damage=4.0, energy=90.0
    )
    _threats(m, 55, 47.0, [hit])
    _threats(m, 56, 49.0)  # a power-1 wave again (47, its gain of 3 showing a turn late, less 1)
    assert m.threat_bins[8] == 1.0 and len(m.threats) == 1
    turn = 57
    while len(m.threats) == 1 and turn < 90:  # until it reaches us, unhit
        v = _threats(m, turn, 49.0)
        turn += 1
    assert m.threat_bins == [0.0] * 8 + [1.0]  # the hits alone, visits or not
    assert v[4] == pytest.approx(1.0 / 4.0)  # the hits' confidence: w / (w + 3)
    if not visits:
        assert v[5:14].tolist() == [0.0] * 8 + [1.0] and m.threat_passed == 0.0
        return
    assert m.threat_visits_bins == pytest.approx([0, 0, 0, 0, 1.99, 0, 0, 0, 0])  # the second visit, bin 4
    # The hit rate: hits over waves that reached us (each decayed 0.97 a wave) with 3 waves more below.
    rate = 0.97 / (0.97 + 1.0 + 3.0)
    assert rate > 0.15  # the full weight
    shares = [0, 0, 0, 0, visits / (1 + visits), 0, 0, 0, 1 / (1 + visits)]
    assert v[5:14] == pytest.approx(shares, abs=1e-6)
    m.new_game()
    assert (m.threat_passed, m.threat_hits, m.threat_bins) == (0.0, 0.0, [0.0] * 9)
    assert m.threat_visits_bins == [0.0] * 9


def _surf_memory(k: float, bins: list[float]) -> F.RoundMemory:
    m = F.RoundMemory(arena_width=W, arena_height=H, my_id=ME, surf_shaping=k)
    m.threat_bins = list(bins)
    return m


@pytest.mark.parametrize("k", [0.0, 10.0])
def test_surf_shaping_prices_each_enemy_wave_once_by_the_hits_in_our_bin_when_it_reaches_us(k: float) -> None:
    # Hits so far: 2 at guess factor 0 (bin 4), 1 in each neighbour's far side (bins 3 and 8): weight 4.
    m = _surf_memory(k, [0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 1.0])
    _threats(m, 1, 50.0)
    _threats(m, 2, 48.0)  # a power-2 wave (speed 14) from 400 away; we stand on its line: guess factor 0
    charged = []
    for turn in range(3, 32):  # it reaches us at turn 30 (radius 406), is past us at 31
        _threats(m, turn, 48.0)
        t = tick(state(x=100.0, y=300.0), [scan(500.0, 300.0, energy=48.0)], turn=turn)
        charged.append(-F.reward(t, m))
        assert m.surf_due == 0.0  # the reward takes it
    danger = (2.0 + 0.5 * (1.0 + 0.0)) / 4.0  # our bin, its neighbours at half weight, over the weight
    assert charged[30 - 3] == pytest.approx(k * danger)
    assert sum(charged) == pytest.approx(k * danger)  # once, on the turn it reaches us


def test_surf_shaping_charges_nothing_before_the_first_hit_and_needs_the_threat_inputs() -> None:
    m = _surf_memory(10.0, [0.0] * 9)
    _threats(m, 1, 50.0)
    _threats(m, 2, 48.0)
    for turn in range(3, 32):
        _threats(m, turn, 48.0)
        assert m.surf_due == 0.0
    assert F.shaping_problem(1.0, 10.0, 10.0, threat_inputs=True) is None
    assert F.shaping_problem(0.0, 0.0, 10.0, threat_inputs=False) == (
        "surf_shaping needs the threat inputs (SACBOT_THREAT_INPUTS=1)"
    )
    assert (
        F.shaping_problem(0.0, 0.0, -1.0, threat_inputs=True)
        == "surf_shaping must be 0 (off) or more, not -1.0"
    )
    assert (
        F.shaping_problem(math.nan, 0.0, 0.0, threat_inputs=True)
        == "aim_shaping must be 0 (off) or more, not nan"
    )
    with pytest.raises(UserError, match="surf_shaping needs the threat inputs") as bad:
        TankRoyaleEnv("Surfer", surf_shaping=10.0)  # the environment and play's features raise it
    assert bad.value.exit_code == 2


def test_stored_observation_lays_out_state_waves_threats_then_bullets() -> None:
    def stored(waves: bool, threats: bool, bullets: bool) -> np.ndarray:
        m = memory()
        t = tick(state(x=100.0, y=300.0), [scan(500.0, 300.0, direction=90.0, speed=8.0)])
        t.bullet_states = [_shot(300.0, 300.0, 0.0)]
        return F.stored_observation(t, m, waves, threats, bullets)

    every, plain = stored(True, True, True), stored(False, False, False)
    sizes = NetworkSizes(wave_inputs=True, threat_inputs=True, bullet_inputs=True)
    assert every.shape == (sizes.stored_dim,) == (17 + 12 + 15 + 18,)
    assert np.array_equal(every[:17], plain) and np.array_equal(every[17:29], stored(True, False, False)[17:])
    assert np.array_equal(every[29:44], stored(False, True, False)[17:])
    assert np.array_equal(every[44:], stored(False, False, True)[17:])
    assert every[27] == pytest.approx(1.0)  # the enemy's sideways speed, among the wave inputs
    assert every[30] == pytest.approx(1.0)  # no enemy wave in flight: its time to arrive reads as far off
