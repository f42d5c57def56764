"""Hindsight aim: the labels on hand-made rounds, replayed shots in the engine, and the trainer's term."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from torch import Tensor

from sacbot.agent.features import STATE_DIM, UNSEEN_ENEMY
from sacbot.agent.hindsight import HORIZON, hindsight_aim, hit_distance
from sacbot.agent.networks import NetworkSizes
from sacbot.agent.options import HindsightDistance
from sacbot.agent.teacher import distillation_loss, teacher_action
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.env import TankRoyaleEnv
from sacbot.errors import UserError

W, H = 800.0, 600.0
DIAGONAL = math.hypot(W, H)
SMALL = NetworkSizes(hidden=32)


def still_round(steps: int, shot: int, power: float = 2.0, gun: float = 0.0) -> np.ndarray:
    """States s_0..s_steps of a round: we sit at (100, 100) facing east with the gun at `gun` degrees, the
    enemy sits still 300 away at 30 degrees; the gun is cool until the shot a_shot, hot after it."""
    s = np.zeros((steps + 1, STATE_DIM), np.float32)
    s[:, 0], s[:, 1] = 100.0 / W, 100.0 / H
    s[:, 4] = gun / 180.0
    s[:, 6] = np.where(np.arange(steps + 1) <= shot, 0.0, (1.0 + power / 5.0) / 3.0)
    s[:, 7] = 0.8
    s[:, 12], s[:, 13], s[:, 16] = 300.0 / DIAGONAL, 30.0 / 180.0, 0.5
    return s


def test_a_shot_is_labelled_at_its_aiming_step_with_the_turn_onto_the_enemy() -> None:
    s = still_round(40, shot=5, gun=10.0)
    labels = hindsight_aim(s, W, H)
    assert labels.shape == (40, 4) and labels.dtype == np.float32
    assert np.flatnonzero(labels[:, 1]).tolist() == [4]  # the step before the shot decides its direction
    assert labels[4, 0] == pytest.approx((30.0 - 10.0) / 20.0, abs=1e-4)
    # A gun 80 degrees off: the most one turn can do, toward the enemy.
    assert hindsight_aim(still_round(40, shot=5, gun=-50.0), W, H)[4, 0] == pytest.approx(1.0)
    across = still_round(40, shot=5, gun=-170.0)  # the short way round is across +-180
    across[:, 13] = 170.0 / 180.0
    assert hindsight_aim(across, W, H)[4, 0] == pytest.approx(-20.0 / 20.0 * 1.0, abs=1e-4)


def test_the_trigger_is_labelled_on_every_cool_step_by_where_the_gun_pointed() -> None:
    on = still_round(40, shot=5, gun=30.0)  # the gun on the still enemy, 300 away: the teacher's power is 1
    labels = hindsight_aim(on, W, H)
    assert np.flatnonzero(labels[:, 3]).tolist() == [0, 1, 2, 3, 4, 5]  # the cool steps, s_0..s_5
    assert labels[:6, 2] == pytest.approx(1.0 / 3.0)
    # The teacher's ramp from its power at a bot's half-width (3.4 degrees at 300) down to -1 at three.
    near = hindsight_aim(still_round(40, shot=5, gun=26.0), W, H)[:6, 2]  # 4 degrees off
    assert near == pytest.approx(1.0 / 3.0 - (4.0 - 3.43) / 6.87 * 4.0 / 3.0, abs=2e-3)
    assert hindsight_aim(still_round(40, shot=5, gun=10.0), W, H)[:6, 2] == pytest.approx(-1.0)
    late = still_round(20, shot=5, gun=30.0)  # a power-1 bullet (17 a turn) gets there 17 turns after it left
    assert np.flatnonzero(hindsight_aim(late, W, H)[:, 3]).tolist() == [0, 1, 2, 3]
    unseen = still_round(40, shot=5, gun=30.0)
    unseen[:3, 12:17] = UNSEEN_ENEMY  # the first scan at s_3: no trigger label before it
    assert np.flatnonzero(hindsight_aim(unseen, W, H)[:, 3]).tolist() == [3, 4, 5]


def test_more_steps_before_a_shot_each_turn_toward_the_same_direction() -> None:
    s = still_round(60, shot=20, gun=10.0)
    s[17, 4], s[18, 4] = -40.0 / 180.0, 20.0 / 180.0  # the gun swung about before the shot
    labels = hindsight_aim(s, W, H, steps=3)
    assert np.flatnonzero(labels[:, 1]).tolist() == [17, 18, 19]
    assert labels[17:20, 0] == pytest.approx([1.0, 10.0 / 20.0, 20.0 / 20.0], abs=1e-4)
    # Two shots 12 turns apart, 14 steps labelled before each: a step before both takes the nearer shot's.
    two = still_round(70, shot=20, gun=40.0)
    two[22:33, 6] = 0.0  # cool again at 32, which fires too
    two[46:, 13] = 60.0 / 180.0  # the enemy stands elsewhere once the first bullet has passed (turn 41)
    two[31, 4] = 60.0 / 180.0  # the gun on the second shot's direction the step before it
    labels = hindsight_aim(two, W, H, steps=14)
    assert np.flatnonzero(labels[:, 1]).tolist() == list(range(6, 32))
    assert labels[6:20, 0] == pytest.approx(-0.5, abs=1e-4)  # from 40 degrees toward 30
    assert labels[20:31, 0] == pytest.approx(1.0, abs=1e-4)  # toward 60
    assert labels[31, 0] == pytest.approx(0.0, abs=1e-4)


def test_the_bearing_target_points_each_step_at_the_enemy_plus_the_shots_offset() -> None:
    # The enemy drives counter-clockwise about us, 300 away, its bearing 10 + u degrees at step u, until the
    # shot at 20; from then on it stands at 35 degrees, where the bullet finds it: 6 degrees ahead of its
    # bearing at the aiming step 19 (29 degrees).
    s = still_round(60, shot=20, gun=20.0)
    bearing = np.where(np.arange(61) < 20, 10.0 + np.arange(61), 35.0)
    s[:, 13] = bearing / 180.0
    s[:20, 14], s[:20, 15] = (bearing[:20] + 90.0) / 180.0, 0.5
    toward_shot = hindsight_aim(s, W, H, steps=3)
    assert toward_shot[17:20, 0] == pytest.approx([0.75, 0.75, 0.75], abs=1e-4)  # 35 from the gun's 20
    labels = hindsight_aim(s, W, H, steps=3, target="bearing")
    assert np.flatnonzero(labels[:, 1]).tolist() == [17, 18, 19]
    # Each step's bearing plus 6: 33, 34 and 35 degrees; the aiming step's label is the same either way.
    assert labels[17:20, 0] == pytest.approx([13.0 / 20.0, 14.0 / 20.0, 15.0 / 20.0], abs=1e-4)
    assert np.array_equal(labels[:, 2:], toward_shot[:, 2:])  # the trigger labels do not change
    # At step 17 the enemy ran the other way about us: the offset is mirrored there (27 - 6 = 21 degrees).
    s[17, 14] = (bearing[17] - 90.0) / 180.0
    assert hindsight_aim(s, W, H, steps=3, target="bearing")[17, 0] == pytest.approx(1.0 / 20.0, abs=1e-4)
    # The trainer's replay labels its rounds so (`hindsight_target`), and says so for a target it lacks.
    config = TrainerConfig(sizes=SMALL, hindsight_aim=1.0, hindsight_steps=3, hindsight_target="bearing")
    relabel = SacTrainer(config).replay.relabel
    assert relabel is not None and relabel(s)[17, 0] == pytest.approx(1.0 / 20.0, abs=1e-4)
    with pytest.raises(UserError, match="hindsight_target must be 'direction' or 'bearing'"):
        TrainerConfig(hindsight_target="ahead")  # type: ignore[arg-type]


def test_with_the_gun_offset_the_labels_are_offsets_from_each_steps_bearing() -> None:
    # The round of the test above: the bullet finds the enemy at 35 degrees; its bearing was 27, 28 and 29
    # at steps 17-19, and 6 degrees behind the shot at the aiming step.
    s = still_round(60, shot=20, gun=20.0)
    bearing = np.where(np.arange(61) < 20, 10.0 + np.arange(61), 35.0)
    s[:, 13] = bearing / 180.0
    s[:20, 14], s[:20, 15] = (bearing[:20] + 90.0) / 180.0, 0.5
    toward_shot = hindsight_aim(s, W, H, steps=3, gun_offset=True)
    assert np.flatnonzero(toward_shot[:, 1]).tolist() == [17, 18, 19]
    assert toward_shot[17:20, 0] == pytest.approx([8.0 / 45.0, 7.0 / 45.0, 6.0 / 45.0], abs=1e-4)
    s[17, 14] = (bearing[17] - 90.0) / 180.0  # at step 17 the enemy ran the other way about us
    labels = hindsight_aim(s, W, H, steps=3, target="bearing", gun_offset=True)
    assert labels[17:20, 0] == pytest.approx([-6.0 / 45.0, 6.0 / 45.0, 6.0 / 45.0], abs=1e-4)
    # Where no enemy was seen yet there is no bearing: the label stays the turn (the action's meaning there).
    s[18, 12:17] = UNSEEN_ENEMY
    assert hindsight_aim(s, W, H, steps=3, gun_offset=True)[18, 0] == pytest.approx(15.0 / 20.0, abs=1e-4)
    # The trainer's replay labels its rounds in the gun entry's meaning of its networks.
    sizes = NetworkSizes(hidden=32, gun_offset=True)
    config = TrainerConfig(sizes=sizes, hindsight_aim=1.0, hindsight_steps=3, hindsight_target="bearing")
    relabel = SacTrainer(config).replay.relabel
    assert relabel is not None and relabel(s)[17, 0] == pytest.approx(-6.0 / 45.0, abs=1e-4)


def test_no_label_where_nothing_says_where_the_shot_should_have_gone() -> None:
    # The round ends before a power-2 bullet (14 a turn) covers the 300 units: 20 turns after the shot.
    assert not hindsight_aim(still_round(22, shot=5), W, H)[:, 1].any()
    assert hindsight_aim(still_round(26, shot=5), W, H)[:, 1].any()
    unseen = still_round(40, shot=5)
    unseen[:, 12:17] = UNSEEN_ENEMY
    assert not hindsight_aim(unseen, W, H)[:, 1].any()
    assert not hindsight_aim(still_round(40, shot=0), W, H)[:, 1].any()  # a_0's aim was nobody's choice
    assert not hindsight_aim(still_round(40, shot=60), W, H)[:, 1].any()  # no shot
    assert hindsight_aim(still_round(1, shot=0), W, H).shape == (1, 4)
    # The enemy died (its entries go back to unseen) just after the shot: its last seen place still counts.
    dead = still_round(40, shot=5, gun=10.0)
    dead[8:, 12:17] = UNSEEN_ENEMY
    assert hindsight_aim(dead, W, H)[4, 0] == pytest.approx(1.0, abs=1e-4)
    assert HORIZON * 11.0 > DIAGONAL  # the slowest bullet crosses the arena within the search


def _teacher_round(opponent: str, seed: int, noise: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A round in the engine: the teacher's actions with its gun turn jittered; states, actions, rewards."""
    env = TankRoyaleEnv(opponent, radar_mode="lock", rounds_per_game=1, max_turns=500)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    states, actions, rewards = [obs], [], []
    while True:
        a = teacher_action(torch.from_numpy(obs)).numpy()
        a[2] = np.clip(a[2] + rng.normal(0.0, noise), -1.0, 1.0)
        obs, r, terminated, truncated, _ = env.step(a)
        states.append(obs)
        actions.append(a)
        rewards.append(r)
        if terminated or truncated:
            return np.stack(states), np.stack(actions), np.asarray(rewards)


def _hits(opponent: str, seed: int, actions: np.ndarray) -> dict[int, bool]:
    """The same game played with these actions: for each step whose action fired, whether that bullet hit."""
    env = TankRoyaleEnv(opponent, radar_mode="lock", rounds_per_game=1, max_turns=500)
    env.reset(seed=seed)
    fired_at: dict[int, int] = {}
    hit: set[int] = set()
    for step, a in enumerate(actions):
        _, _, terminated, truncated, info = env.step(a)
        for event in info["events"]:
            name = type(event).__name__
            if name == "BulletFiredEvent":
                fired_at[event.bullet.bullet_id] = step
            elif name == "BulletHitBotEvent" and event.bullet.owner_id == 1:
                hit.add(event.bullet.bullet_id)
        if terminated or truncated:
            break
    return {step: bullet in hit for bullet, step in fired_at.items()}


@pytest.mark.parametrize("opponent", ["Walls", "SpinBot"])
def test_replayed_with_the_hindsight_turn_the_shots_hit(opponent: str) -> None:
    """Each labelled shot, played again in the same game with the gun entry of its aiming step set to its
    label (everything else as it was), hits; several had missed."""
    states, actions, _ = _teacher_round(opponent, 5, noise=0.3)
    labels = hindsight_aim(states, W, H)
    aims = [int(i) for i in np.flatnonzero(labels[:, 1]) if abs(labels[i, 0]) < 1.0][:8]
    assert len(aims) == 8
    played = _hits(opponent, 5, actions)
    assert {i + 1 for i in np.flatnonzero(labels[:, 1])} <= played.keys()  # the labels sit before shots
    for i in aims:
        relabelled = actions.copy()
        relabelled[i, 2] = labels[i, 0]
        assert _hits(opponent, 5, relabelled)[i + 1], f"the shot of step {i + 1}"
    assert sum(not played[i + 1] for i in aims) >= 3


def _filled(
    hindsight: float, kickstart: float = 0.0, trigger: float = 1.0, distance: HindsightDistance = "squared"
) -> SacTrainer:
    """A small trainer whose replay holds engine rounds played by the teacher with a jittered gun."""
    trainer = SacTrainer(
        TrainerConfig(
            sizes=SMALL,
            batch_size=16,
            replay_capacity=4000,
            device="cpu",
            seed=1,
            hindsight_aim=hindsight,
            hindsight_trigger=trigger,
            hindsight_distance=distance,
            kickstart=kickstart,
        )
    )
    for seed in range(3):
        states, actions, rewards = _teacher_round("SpinBot", seed, noise=0.5)
        n = len(actions)
        done = np.zeros(n, np.float32)
        done[-1] = 1.0
        hidden = np.zeros((n, SMALL.hidden), np.float32)
        trainer.replay.add_round(states, actions.astype(np.float32), rewards.astype(np.float32), done, hidden)
    return trainer


def _label_distance(trainer: SacTrainer, entry: int) -> float:
    """Mean squared distance of the actor's mean action entry (2 the gun turn, 3 the fire entry) from its
    labels, over the labelled trained steps."""
    batch = trainer.replay.sample(256, np.random.default_rng(3))
    obs, _, _, _, h0, _, labels = trainer._tensors(batch)
    assert labels is not None
    b = trainer.config.burn_in
    with torch.no_grad():
        h = trainer.actor.last_hidden_tm(obs[:b], h0)
        mu, _, _ = trainer.actor.sequence_tm(obs[b:-1], h)
    column = 0 if entry == 2 else 2
    weight = labels[b:, :, column + 1]
    return float((weight * (torch.tanh(mu[..., entry]) - labels[b:, :, column]).pow(2)).sum() / weight.sum())


def test_the_hindsight_term_pulls_the_gun_and_trigger_toward_the_labels() -> None:
    plain, aiming = _filled(0.0), _filled(20.0)
    assert plain.replay.labels is None and aiming.replay.labels is not None
    # A distance on the aiming trainer's labels for both (the same rounds, the same fresh actor).
    plain.replay = aiming.replay
    assert _label_distance(aiming, 2) == pytest.approx(_label_distance(plain, 2))
    assert _label_distance(aiming, 3) == pytest.approx(_label_distance(plain, 3))
    for _ in range(300):
        m_plain, m_aiming = plain.train_step(), aiming.train_step()
    assert m_plain is not None and m_aiming is not None
    assert "hindsight_aim_loss" not in m_plain and "hindsight_aim_share" not in m_plain
    assert m_aiming["hindsight_aim_loss"] > 0.0 and 0.0 < m_aiming["hindsight_aim_share"] < 0.2
    assert _label_distance(aiming, 2) < 0.6 * _label_distance(plain, 2)
    assert _label_distance(aiming, 3) < 0.6 * _label_distance(plain, 3)


def test_the_trigger_labels_share_scales_the_fire_entrys_term() -> None:
    """hindsight_trigger = k weighs the fire entry's squared distance k times; at 0 the teacher's fire entry
    is back on the labelled steps."""
    hindsight, kick = {}, {}
    for trigger in (0.0, 1.0, 2.0):
        trainer = _filled(20.0, kickstart=1.0, trigger=trigger)
        obs, act, rew, done, h0, critic_obs, labels = trainer._tensors(
            trainer.replay.sample(64, np.random.default_rng(5))
        )
        torch.manual_seed(0)
        loss = trainer.losses(obs, act, rew, done, h0, critic_obs, labels)
        hindsight[trigger] = float(loss["hindsight_aim_loss"].detach())
        kick[trigger] = float(loss["kickstart_loss"].detach())
    gun = hindsight[0.0]
    assert gun > 0.0 and hindsight[1.0] > gun
    assert hindsight[2.0] - gun == pytest.approx(2.0 * (hindsight[1.0] - gun), rel=1e-4)
    assert kick[1.0] == pytest.approx(kick[2.0]) and kick[0.0] > kick[1.0]
    with pytest.raises(UserError, match="hindsight_trigger must be 0"):
        TrainerConfig(hindsight_trigger=-0.5)


def test_the_absolute_and_hit_distances_replace_the_squared_one() -> None:
    """hindsight_distance = "absolute": the term is the mean of w_t |gun turn - g_t| (the labels' median is
    its best target), "hit" the mean of w_t hit_distance(gun turn - g_t), "squared" the mean of w_t (gun
    turn - g_t)^2; the same batch, the same fresh actor."""
    terms: dict[HindsightDistance, float] = {}
    kinds: tuple[tuple[HindsightDistance, Callable[[Tensor, Tensor], Tensor]], ...] = (
        ("squared", lambda gap, states: gap.square()),
        ("absolute", lambda gap, states: gap.abs()),
        ("hit", lambda gap, states: hit_distance(gap, states, 800.0, 600.0)),
    )
    for kind, measure in kinds:
        trainer = _filled(20.0, trigger=0.0, distance=kind)
        obs, act, rew, done, h0, critic_obs, labels = trainer._tensors(
            trainer.replay.sample(64, np.random.default_rng(5))
        )
        assert labels is not None
        loss = trainer.losses(obs, act, rew, done, h0, critic_obs, labels)
        b, end = trainer.config.burn_in, trainer.config.burn_in + trainer.config.train_len
        with torch.no_grad():
            h = trainer.actor.last_hidden_tm(obs[:b], h0)
            mu, _, _ = trainer.actor.sequence_tm(obs[b:end], h)
        gun, weight = labels[b:end, :, 0], labels[b:end, :, 1]
        expected = float((weight * measure(torch.tanh(mu[..., 2]) - gun, obs[b:end])).mean())
        terms[kind] = float(loss["hindsight_aim_loss"].detach())
        assert terms[kind] == pytest.approx(expected, rel=1e-4)
    assert terms["absolute"] > 1.2 * terms["squared"]  # distances under 1: |x| above x^2
    assert terms["hit"] < 0.5 * terms["squared"]  # a fresh gun lies many half-widths from its labels
    with pytest.raises(UserError, match="hindsight_distance must be 'squared', 'absolute' or 'hit'"):
        TrainerConfig(hindsight_distance="cubic")  # type: ignore[arg-type]


def test_the_teachers_gun_turn_steps_aside_where_a_label_is() -> None:
    mean = torch.zeros(5, 4)
    states = torch.from_numpy(still_round(4, shot=9, gun=10.0)).float()
    full = distillation_loss(mean, states, W, H)
    entries = torch.ones(5, 4)
    entries[[1, 3], 2] = 0.0
    left_out = distillation_loss(mean, states, W, H, entries=entries)
    gun_term = teacher_action(states, W, H)[:, 2].pow(2)
    assert float(full - left_out) == pytest.approx(float(gun_term[[1, 3]].sum() / 5), rel=1e-5)
    # Its fire entry, for a gun that follows the hindsight aim: the power wherever the gun points.
    off = torch.from_numpy(still_round(2, shot=9, gun=-60.0)).float()  # 300 away: power 1, the gun 90 off
    assert teacher_action(off, W, H)[0, 3] == pytest.approx(-1.0)
    assert teacher_action(off, W, H, aimed_fire=False)[0, 3] == pytest.approx(1.0 / 3.0)
    assert torch.equal(teacher_action(off, W, H)[:, :3], teacher_action(off, W, H, aimed_fire=False)[:, :3])
    with pytest.raises(UserError, match="hindsight_aim must be 0"):
        TrainerConfig(hindsight_aim=-1.0)


def test_the_hit_distance_aims_at_the_denser_side_where_the_squared_one_aims_between() -> None:
    """Labels that split 70 / 30 between 10 degrees ahead and 10 behind (a dodger's two answers), the enemy
    400 units away (half-width 2.6 degrees): the squared distance's best single gun entry is their mean, 4
    degrees ahead, which hits neither side; the hit distance's lies on the denser side, and a gradient
    descent from no turn finds it. Near a label the hit distance is the squared one."""
    labels = torch.tensor([0.5] * 7 + [-0.5] * 3)  # gun-entry units: 20 degrees
    states = torch.zeros(10, STATE_DIM)
    states[:, 12] = 400.0 / 1000.0  # the distance entry: / the 800 x 600 arena's diagonal
    width = math.degrees(math.atan2(18.0, 400.0)) / 20.0
    grid = torch.linspace(-1.0, 1.0, 2001)
    gaps = grid[:, None] - labels[None, :]
    squared = gaps.square().mean(1)
    hit = hit_distance(gaps, states.expand(2001, 10, STATE_DIM), 800.0, 600.0).mean(1)
    best_squared, best_hit = float(grid[squared.argmin()]), float(grid[hit.argmin()])
    assert best_squared == pytest.approx(0.2, abs=1e-3)
    assert abs(best_hit - 0.5) < 0.2 * width
    hits = lambda aim: float(((labels - aim).abs() < width).float().mean())  # noqa: E731
    assert hits(best_squared) == 0.0 and hits(best_hit) == pytest.approx(0.7)
    gun = torch.zeros((), requires_grad=True)
    step = torch.optim.SGD([gun], lr=0.5)
    for _ in range(400):
        step.zero_grad()
        hit_distance(gun - labels, states, 800.0, 600.0).mean().backward()
        step.step()
    assert abs(float(gun.detach()) - 0.5) < 0.2 * width
    small = torch.tensor([0.01 * width])
    assert float(hit_distance(small, states[:1], 800.0, 600.0)) == pytest.approx(
        float(small.square()), rel=1e-3
    )
