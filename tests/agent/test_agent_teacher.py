"""The kickstarting teacher: its actions on hand-made states, its play in the engine, and the trainer term."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

from sacbot.agent.features import UNSEEN_ENEMY, action_to_intent
from sacbot.agent.networks import NetworkSizes
from sacbot.agent.replay import Batch
from sacbot.agent.teacher import distillation_loss, surf_movement, teacher_action
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.env import TankRoyaleEnv
from sacbot.errors import UserError

W, H = 800.0, 600.0
DIAGONAL = math.hypot(W, H)


def state(
    x: float = 400.0,
    y: float = 300.0,
    body: float = 0.0,
    speed: float = 0.0,
    gun: float = 0.0,
    enemy: tuple[float, float, float, float, float] | None = None,
) -> torch.Tensor:
    """A state; `enemy` = (distance, bearing from our body heading in degrees, heading, speed, energy)."""
    s = np.zeros(17, np.float32)
    s[0], s[1], s[2], s[3], s[4] = x / W, y / H, body / 180.0, speed / 8.0, gun / 180.0
    s[7] = 1.0
    s[8:12] = (H - y) / H, y / H, (W - x) / W, x / W
    if enemy is None:
        s[12:17] = UNSEEN_ENEMY
    else:
        d, b, heading, v, e = enemy
        s[12:17] = d / DIAGONAL, b / 180.0, heading / 180.0, v / 8.0, e / 100.0
    return torch.from_numpy(s)


def test_before_the_first_scan_the_gun_spins_and_nothing_fires() -> None:
    a = teacher_action(state())
    assert a.tolist() == [0.0, 0.0, 1.0, -1.0]


def test_a_still_enemy_dead_ahead_of_the_gun_is_shot_at_full_power() -> None:
    a = teacher_action(state(gun=30.0, enemy=(100.0, 30.0, 0.0, 0.0, 1.0)))
    assert abs(float(a[2])) < 1e-4  # no gun turn needed
    assert float(a[3]) == pytest.approx(1.0)  # power 3 at 100 away


def test_the_gun_turns_toward_an_enemy_off_to_the_left_and_holds_fire() -> None:
    a = teacher_action(state(gun=0.0, enemy=(300.0, 90.0, 0.0, 0.0, 1.0)))
    assert float(a[2]) == 1.0 and float(a[3]) == -1.0  # Tank Royale: positive turns counter-clockwise


def test_the_aim_leads_a_crossing_target() -> None:
    # Enemy 300 east, driving north at 2; a power-2 bullet (14/turn) needs ~22 turns, so the aim point is
    # ~44 north of it: ~8 degrees left of east, a gun turn of ~0.4 of the maximum 20.
    a = teacher_action(state(gun=0.0, enemy=(300.0, 0.0, 90.0, 2.0, 1.0)))
    assert 0.3 < float(a[2]) < 0.5 and float(a[3]) * 3.0 < 0.1  # not aimed yet: no shot


def test_the_body_drives_across_the_line_of_fire_and_reverses_before_a_wall() -> None:
    free = teacher_action(state(x=400, y=300, body=90.0, speed=8.0, enemy=(200.0, -90.0, 0.0, 0.0, 1.0)))
    assert float(free[1]) == 1.0 and abs(float(free[0])) < 0.2  # already across: keep going north
    walled = teacher_action(state(x=400, y=560, body=90.0, speed=8.0, enemy=(200.0, -90.0, 0.0, 0.0, 1.0)))
    assert float(walled[1]) == -1.0  # the north wall is ahead: back off south


def test_the_distillation_loss_ignores_the_fire_entry_while_the_gun_is_hot() -> None:
    cool = state(gun=30.0, enemy=(100.0, 30.0, 0.0, 0.0, 1.0))
    hot = cool.clone()
    hot[6] = 0.5
    target = teacher_action(cool)
    never_fires = target.clone()
    never_fires[3] = -1.0
    assert float(distillation_loss(target, cool)) == 0.0
    assert float(distillation_loss(never_fires, cool)) == pytest.approx(4.0)  # (1 - (-1))^2
    assert float(distillation_loss(never_fires, hot)) == 0.0


def test_the_movement_scale_weighs_the_turn_and_speed_entries_only() -> None:
    obs = state(gun=30.0, enemy=(100.0, 30.0, 0.0, 0.0, 1.0))
    target = teacher_action(obs)
    off_course, off_aim = target.clone(), target.clone()
    off_course[0] += 0.5  # the body turn
    off_course[1] -= 0.5  # the speed
    off_aim[2] += 0.5  # the gun turn
    assert float(distillation_loss(off_course, obs)) == pytest.approx(0.5)
    assert float(distillation_loss(off_course, obs, movement=0.2)) == pytest.approx(0.1)
    assert float(distillation_loss(off_course, obs, movement=0.0)) == 0.0
    for movement in (0.0, 0.2, 5.0):  # the gun's entries keep their weight
        assert float(distillation_loss(off_aim, obs, movement=movement)) == pytest.approx(0.25)
    with pytest.raises(UserError, match="kickstart_movement"):
        TrainerConfig(kickstart_movement=-1.0)


def test_batched_actions_equal_one_at_a_time_and_stay_in_range() -> None:
    rng = np.random.default_rng(3)
    batch = torch.from_numpy(rng.uniform(-1, 1, (5, 7, 17)).astype(np.float32))
    out = teacher_action(batch)
    assert out.shape == (5, 7, 4) and float(out.abs().max()) <= 1.0
    assert torch.allclose(out[2, 3], teacher_action(batch[2, 3]))


@pytest.mark.parametrize("opponent", ["Target", "SpinBot"])
def test_the_teacher_wins_real_engine_rounds(opponent: str) -> None:
    env = TankRoyaleEnv(opponent, radar_mode="lock", rounds_per_game=2, max_turns=3000)
    obs, _ = env.reset(seed=5)
    won = 0
    for _ in range(2):
        while True:
            obs, _, terminated, truncated, info = env.step(teacher_action(torch.from_numpy(obs)).numpy())
            if terminated or truncated:
                won += info["round_result"]["outcome"] == "won"
                break
        obs, _ = env.reset()
    assert won == 2


def test_the_teachers_gun_offset_entry_turns_the_gun_as_its_turn_entry_does() -> None:
    """With the gun offset on (`NetworkSizes.gun_offset`) the teacher's gun entry is its aim's offset from
    the enemy's bearing; read as the environment reads it, it asks for the gun turn its turn entry asks for
    wherever its aim lies within 45 degrees of the bearing (the entry's reach): against Crazy, 379 of the 398
    steps with an enemy seen (its linear aim leads by more only close in, where a bot is wide)."""
    for gun_offset in (False, True):
        env = TankRoyaleEnv(
            "Crazy", radar_mode="lock", max_turns=400, sizes=NetworkSizes(gun_offset=gun_offset)
        )
        obs, _ = env.reset(seed=2)
        compared = beyond = 0
        while True:
            state = torch.from_numpy(obs)
            turn, offset = teacher_action(state), teacher_action(state, gun_offset=True)
            if env.memory.seen and abs(float(offset[2])) < 1.0:
                env.memory.gun_offset = False
                asked = action_to_intent(turn.numpy(), "lock", env.memory).gun_turn_rate
                env.memory.gun_offset = True
                assert action_to_intent(offset.numpy(), "lock", env.memory).gun_turn_rate == pytest.approx(
                    asked, abs=1e-3
                )
                compared += 1
            elif env.memory.seen:
                beyond += 1
            else:
                assert float(offset[2]) == float(turn[2]) == 1.0  # before the first scan: spin the gun
            env.memory.gun_offset = gun_offset
            obs, _, terminated, truncated, _ = env.step((offset if gun_offset else turn).numpy())
            if terminated or truncated:
                break
        assert compared > 100 and beyond < compared / 10


SMALL = NetworkSizes(embed=32, hidden=32, head=32)


def _filled(
    kickstart: float,
    anneal: int = 0,
    q_filter: bool = False,
    self_imitation: float = 0.0,
    sizes: NetworkSizes = SMALL,
    opponent: str = "SpinBot",
    **config: Any,
) -> SacTrainer:
    """A small trainer whose replay holds real engine rounds against `opponent`, played by the teacher with
    noise."""
    trainer = SacTrainer(
        TrainerConfig(
            sizes=sizes,
            batch_size=16,
            replay_capacity=4000,
            device="cpu",
            seed=1,
            kickstart=kickstart,
            kickstart_anneal=anneal,
            kickstart_filter=q_filter,
            self_imitation=self_imitation,
            **config,
        )
    )
    rng = np.random.default_rng(0)
    waves, threats = sizes.wave_inputs, sizes.threat_inputs
    env = TankRoyaleEnv(
        opponent,
        radar_mode="lock",
        max_turns=300,
        sizes=NetworkSizes(wave_inputs=waves, threat_inputs=threats),
    )
    for round_seed in range(3):
        obs, _ = env.reset(seed=round_seed)
        states, actions, rewards = [obs], [], []
        while True:
            a = teacher_action(torch.from_numpy(obs)).numpy() + rng.normal(0.0, 0.3, 4)
            a = np.clip(a, -1.0, 1.0).astype(np.float32)
            obs, r, terminated, truncated, _ = env.step(a)
            states.append(obs)
            actions.append(a)
            rewards.append(r)
            if terminated or truncated:
                break
        n = len(actions)
        done = np.zeros(n, np.float32)
        done[-1] = float(terminated)
        trainer.replay.add_round(
            np.stack(states),
            np.stack(actions),
            np.asarray(rewards, np.float32),
            done,
            np.zeros((n, sizes.hidden), np.float32),
        )
    return trainer


def test_kickstarting_pulls_the_actor_toward_the_teacher() -> None:
    trainer = _filled(kickstart=5.0)
    losses = []
    for _ in range(150):
        m = trainer.train_step()
        assert m is not None
        losses.append(m["kickstart_loss"])
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])


def test_without_kickstarting_the_term_is_zero_and_the_losses_are_unchanged() -> None:
    off, on = _filled(kickstart=0.0), _filled(kickstart=5.0)
    m_off, m_on = off.train_step(), on.train_step()
    assert m_off is not None and m_on is not None
    assert m_off["kickstart_loss"] == 0.0 and m_on["kickstart_loss"] > 0.0
    # Same batch, same networks: the SAC losses agree; the teacher's term is reported on its own.
    assert m_off["critic_loss"] == pytest.approx(m_on["critic_loss"])
    assert m_off["actor_loss"] == pytest.approx(m_on["actor_loss"])
    second_off, second_on = off.train_step(), on.train_step()
    assert second_off is not None and second_on is not None
    assert second_off["actor_loss"] != pytest.approx(second_on["actor_loss"])  # but it moved the actor


def test_with_the_gun_offset_the_kickstart_term_pulls_toward_the_teachers_offset() -> None:
    """The same networks and batch: the critics' losses agree, the teacher's term does not (its gun entry is
    an offset from the enemy's bearing there, a turn here); the rest of the update is the same."""
    turn = _filled(kickstart=5.0)
    offset = _filled(kickstart=5.0, sizes=NetworkSizes(embed=32, hidden=32, head=32, gun_offset=True))
    batch = turn.replay.sample(16, np.random.default_rng(4))
    m_turn, m_offset = turn.update(batch), offset.update(batch)
    assert m_turn["critic_loss"] == pytest.approx(m_offset["critic_loss"])
    assert m_turn["kickstart_loss"] > 0.0 and m_offset["kickstart_loss"] > 0.0
    assert m_turn["kickstart_loss"] != pytest.approx(m_offset["kickstart_loss"], rel=1e-3)


def test_an_annealed_kickstart_acts_until_it_fades_then_the_update_is_plain_sac() -> None:
    faded = _filled(kickstart=5.0, anneal=3)
    weights = []
    for _ in range(3):  # updates 0, 1, 2: weights 5, 10/3, 5/3
        m = faded.train_step()
        assert m is not None
        weights.append(m["kickstart_weight"])
    assert weights == pytest.approx([5.0, 10.0 / 3.0, 5.0 / 3.0])
    m = faded.train_step()  # update 3: faded out, no term, no teacher call
    assert m is not None and m["kickstart_weight"] == 0.0 and m["kickstart_loss"] == 0.0


def test_the_movement_scale_switches_on_at_its_update() -> None:
    full = _filled(kickstart=5.0)
    split = _filled(kickstart=5.0, kickstart_movement=0.0, kickstart_movement_from=2)
    for update in range(3):
        a, b = full.train_step(), split.train_step()
        assert a is not None and b is not None
        if update < 2:  # the full term on the movement: the same update as without the setting
            assert b["kickstart_loss"] == pytest.approx(a["kickstart_loss"])
            assert b["actor_loss"] == pytest.approx(a["actor_loss"])
        else:  # the same networks and batch, the movement's share of the term gone
            assert 0.0 < b["kickstart_loss"] < a["kickstart_loss"]
    assert split.config.movement_scale(1) == 1.0 and split.config.movement_scale(10**6) == 0.0
    with pytest.raises(UserError, match="kickstart_movement_from needs kickstart_movement"):
        TrainerConfig(kickstart=5.0, kickstart_movement_from=100)
    with pytest.raises(UserError, match="kickstart_movement_from must be 0 or more"):
        TrainerConfig(kickstart=5.0, kickstart_movement=0.2, kickstart_movement_from=-1)


def test_the_distillation_term_counts_only_the_states_it_keeps() -> None:
    obs = torch.stack([state(enemy=(300.0, b, 0.0, 0.0, 100.0)) for b in (-90.0, 0.0, 45.0, 120.0)])
    student = torch.zeros(4, 4)
    per_state = (teacher_action(obs) - student).pow(2).sum(-1)  # the gun is cool: all four entries count
    keep = torch.tensor([1.0, 0.0, 1.0, 0.0])
    assert distillation_loss(student, obs, keep=torch.ones(4)) == pytest.approx(float(per_state.mean()))
    assert distillation_loss(student, obs, keep=torch.zeros(4)) == 0.0
    # Dropped states add nothing, and the mean stays over all four.
    assert distillation_loss(student, obs, keep=keep) == pytest.approx(float((per_state * keep).sum() / 4))


def test_the_q_filter_keeps_the_term_only_where_the_critics_prefer_the_teacher() -> None:
    plain, filtered = _filled(kickstart=5.0), _filled(kickstart=5.0, q_filter=True)
    m_plain, m_filtered = plain.train_step(), filtered.train_step()
    assert m_plain is not None and m_filtered is not None
    assert "kickstart_kept" not in m_plain
    # Fresh critics rate the teacher's action above the actor's on some states and below on others.
    assert 0.0 < m_filtered["kickstart_kept"] < 1.0
    assert 0.0 < m_filtered["kickstart_loss"] < m_plain["kickstart_loss"]
    # Same batch, same networks: only the teacher's term differs.
    assert m_filtered["critic_loss"] == pytest.approx(m_plain["critic_loss"])
    assert m_filtered["actor_loss"] == pytest.approx(m_plain["actor_loss"])


def test_self_imitation_keeps_only_the_states_where_the_critics_prefer_the_replay_action() -> None:
    plain, imitating = _filled(kickstart=0.0), _filled(kickstart=0.0, self_imitation=5.0)
    m_plain, m_imitating = plain.train_step(), imitating.train_step()
    assert m_plain is not None and m_imitating is not None
    assert "self_imitation_loss" not in m_plain and "self_imitation_kept" not in m_plain
    # Fresh critics rate the noisy replay action above the actor's mean on some states and below on others.
    assert 0.0 < m_imitating["self_imitation_kept"] < 1.0
    assert m_imitating["self_imitation_loss"] > 0.0
    # Same batch, same networks: the SAC losses agree; the term is reported on its own.
    assert m_imitating["critic_loss"] == pytest.approx(m_plain["critic_loss"])
    assert m_imitating["actor_loss"] == pytest.approx(m_plain["actor_loss"])


def _distance_to_replay_actions(trainer: SacTrainer, batch: Batch) -> float:
    """Mean squared distance of the actor's mean action to the batch's own actions, on its trained steps."""
    obs, act, _, _, h0, _, _ = trainer._tensors(batch)
    b = trainer.config.burn_in
    with torch.no_grad():
        h = trainer.actor.last_hidden_tm(obs[:b], h0)
        mu, _, _ = trainer.actor.sequence_tm(obs[b:-1], h)
    return float((torch.tanh(mu) - act[b:]).pow(2).sum(-1).mean())


def test_self_imitation_pulls_the_actor_toward_the_replay_actions() -> None:
    plain, imitating = _filled(kickstart=0.0), _filled(kickstart=0.0, self_imitation=20.0)
    batch = plain.replay.sample(64, np.random.default_rng(7))
    start = _distance_to_replay_actions(plain, batch)
    assert _distance_to_replay_actions(imitating, batch) == pytest.approx(start)  # the same fresh actor
    for _ in range(100):
        assert plain.train_step() is not None and imitating.train_step() is not None
    assert _distance_to_replay_actions(imitating, batch) < 0.85 * _distance_to_replay_actions(plain, batch)


def test_a_negative_self_imitation_weight_is_a_user_error() -> None:
    with pytest.raises(UserError, match="self_imitation"):
        TrainerConfig(self_imitation=-1.0)


THREATS = NetworkSizes(embed=32, hidden=32, head=32, wave_inputs=True, threat_inputs=True)


def surf_window(hits: dict[int, float], confidence: float = 0.5) -> torch.Tensor:
    """Two steps (time-major, one sequence) of an observation with the threat inputs: us at the centre heading
    east at full speed, the enemy 400 north, so we move sideways about it; one wave of power 2 in flight, 21
    and then 20 turns away, our guess factor on it 0.10 and then 0.15 (growing as we go on); `hits`: the hit
    histogram's shares by bin. Going on for 20 turns lands us near +0.81 (bin 8), turning back near -0.21
    (bin 3), stopping near +0.20 (bin 5)."""
    steps = []
    for left, factor in ((21.0, 0.10), (20.0, 0.15)):
        obs = torch.zeros(THREATS.observed_dim)
        obs[:17] = state(speed=8.0, enemy=(400.0, 90.0, 0.0, 0.0, 100.0))
        th = THREATS.threat_at
        obs[th : th + 5] = torch.tensor([1.0 / 3.0, left / 40.0, factor, 2.0 / 3.0, confidence])
        for i, share in hits.items():
            obs[th + 5 + i] = share
        steps.append(obs)
    return torch.stack(steps).unsqueeze(1)


def surfed_speed(hits: dict[int, float], confidence: float = 0.5) -> tuple[float, float]:
    obs = surf_window(hits, confidence)
    moves = surf_movement(obs, teacher_action(obs)[..., :2], THREATS.threat_at)
    assert torch.equal(moves[..., 0], teacher_action(obs)[..., 0])  # the turn stays the teacher's
    return float(moves[0, 0, 1]), float(moves[1, 0, 1])


def test_the_surfing_teacher_goes_where_the_enemys_bullets_have_hit_least() -> None:
    assert surfed_speed({8: 1.0})[1] == -1.0  # its hits lie where going on leads: turn back
    assert surfed_speed({3: 1.0})[1] == 1.0  # where turning back leads: go on
    assert surfed_speed({3: 0.5, 8: 0.5})[1] == 0.0  # at both: stop between them
    assert surfed_speed({5: 1.0})[1] == 1.0  # going on and turning back equally clear: go on


def test_the_surfing_teacher_keeps_the_teachers_speed_until_it_knows_enough() -> None:
    teacher = float(teacher_action(surf_window({8: 1.0}))[1, 0, 1])
    first, _ = surfed_speed({8: 1.0})  # the first step: which way the factor grows is not known yet
    assert first == teacher == 1.0
    assert surfed_speed({8: 1.0}, confidence=0.0)[1] == teacher  # no hit on us yet


def test_the_surfing_teacher_reads_real_rounds_against_surfer() -> None:
    """The teacher's own play against Surfer, read as a trainer reads a window: the surfing speed departs
    from the teacher's on some steps, each of them with a wave in flight after hits, and asks for full speed
    either way or a stop."""
    env = TankRoyaleEnv(
        "Surfer", radar_mode="lock", max_turns=500, sizes=NetworkSizes(wave_inputs=True, threat_inputs=True)
    )
    obs, _ = env.reset(seed=3)
    seen = [obs]
    while True:
        obs, _, terminated, truncated, _ = env.step(teacher_action(torch.from_numpy(obs)).numpy())
        seen.append(obs)
        if terminated or truncated:
            break
    window = torch.from_numpy(np.stack(seen)).unsqueeze(1)
    base = teacher_action(window)[..., :2]
    moves = surf_movement(window, base, THREATS.threat_at)
    changed = (moves[..., 1] != base[..., 1]).squeeze(1)
    th = window[:, 0, THREATS.threat_at :]
    assert int(changed.sum()) > 10
    assert bool(((th[changed, 0] > 0) & (th[changed, 4] > 0)).all())
    assert set(moves[changed, 0, 1].tolist()) <= {-1.0, 0.0, 1.0}


def test_the_surfing_teachers_term_differs_from_the_teachers_on_the_same_batch() -> None:
    """Same networks, same batch of rounds against Surfer: the critics' losses agree, the teacher's term
    does not (its speed entry surfs)."""
    plain = _filled(kickstart=5.0, sizes=THREATS, opponent="Surfer")
    surfing = _filled(kickstart=5.0, sizes=THREATS, opponent="Surfer", teacher_surf=True)
    batch = plain.replay.sample(16, np.random.default_rng(4))
    m_plain, m_surf = plain.update(batch), surfing.update(batch)
    assert m_plain["critic_loss"] == pytest.approx(m_surf["critic_loss"])
    assert m_plain["kickstart_loss"] != pytest.approx(m_surf["kickstart_loss"], rel=1e-3)


def test_the_surfing_teacher_needs_the_threat_inputs() -> None:
    with pytest.raises(UserError, match="teacher_surf needs the threat inputs"):
        TrainerConfig(teacher_surf=True)


def _with_waves(s: torch.Tensor, confidence: float, peak: float) -> torch.Tensor:
    """The state `s` with wave inputs after it: the record's confidence and its peak turned to the enemy's
    side (entries 0 and 11; the histogram is not read)."""
    waves = torch.zeros(12)
    waves[0], waves[11] = confidence, peak
    return torch.cat([s, waves])


def test_the_wave_gun_aims_at_the_records_peak_once_it_holds_a_wave() -> None:
    """`teacher_gun = "wave"`: the gun turns to the bearing plus the peak's share of the largest escape
    angle (power 2 at 250 away: bullet speed 14, asin(8 / 14) = 34.8 degrees), and shoots there; with an
    empty record it aims by linear targeting as before."""
    enemy = (250.0, 0.0, 90.0, 8.0, 1.0)  # dead ahead of the gun, crossing to the left at full speed
    empty, half = _with_waves(state(enemy=enemy), 0.0, 0.5), _with_waves(state(enemy=enemy), 0.2, 0.5)
    assert teacher_action(empty, wave_at=17).tolist() == teacher_action(state(enemy=enemy)).tolist()
    assert teacher_action(half).tolist() == teacher_action(state(enemy=enemy)).tolist()  # not asked for
    escape = math.degrees(math.asin(8.0 / 14.0))
    aimed = teacher_action(half, wave_at=17)
    assert float(aimed[2]) * 20.0 == pytest.approx(min(0.5 * escape, 20.0), abs=1e-3)  # a gun turn of 17.4
    assert float(aimed[3]) == -1.0  # off the aim by more than three tolerances: holds fire
    on_it = _with_waves(state(gun=0.5 * escape, enemy=(250.0, 0.0, 90.0, 8.0, 1.0)), 0.2, 0.5)
    assert float(teacher_action(on_it, wave_at=17)[3]) == pytest.approx(2.0 / 3.0)  # power 2


def test_the_wave_gun_needs_the_wave_inputs() -> None:
    with pytest.raises(UserError, match="teacher_gun = wave needs the wave inputs"):
        TrainerConfig(teacher_gun="wave")
    with pytest.raises(UserError, match="teacher_gun must be one of linear, wave"):
        TrainerConfig(teacher_gun="circular")  # type: ignore[arg-type]


def test_the_wave_guns_term_differs_from_the_linear_ones_on_the_same_batch() -> None:
    """Same networks, same rounds against Surfer: the wave gun pulls the teacher's gun entry elsewhere."""
    linear = _filled(kickstart=5.0, sizes=THREATS, opponent="Surfer")
    wave = _filled(kickstart=5.0, sizes=THREATS, opponent="Surfer", teacher_gun="wave")
    batch = linear.replay.sample(16, np.random.default_rng(4))
    m_linear, m_wave = linear.update(batch), wave.update(batch)
    assert m_linear["critic_loss"] == pytest.approx(m_wave["critic_loss"])
    assert m_linear["kickstart_loss"] != pytest.approx(m_wave["kickstart_loss"], rel=1e-3)
