"""The Gymnasium environment over the engine: API conformance, episodes = rounds, determinism, vector form."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import sacbot.env
from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.teacher import teacher_action
from sacbot.env import ENV_ID, TankRoyaleEnv, VecTankRoyaleEnv
from sacbot.errors import UserError


def play_round(
    env: TankRoyaleEnv, seed: int, action_seed: int = 0
) -> tuple[list[np.ndarray], list[float], dict]:
    rng = np.random.default_rng(action_seed)
    obs, _ = env.reset(seed=seed)
    observations, rewards = [obs], []
    while True:
        obs, r, terminated, truncated, info = env.step(rng.uniform(-1, 1, 4).astype(np.float32))
        observations.append(obs)
        rewards.append(r)
        if terminated or truncated:
            return observations, rewards, info


def test_passes_gymnasiums_env_checker() -> None:
    check_env(TankRoyaleEnv("SpinBot"), skip_render_check=True)


def test_registered_id_makes_the_env_with_its_spaces() -> None:
    env = gymnasium.make(ENV_ID, opponent="Walls")
    assert env.observation_space == gymnasium.spaces.Box(-1.0, 1.0, (17,), np.float32)
    assert env.action_space == gymnasium.spaces.Box(-1.0, 1.0, (4,), np.float32)
    obs, info = env.reset(seed=3)
    assert obs.shape == (17,) and obs.dtype == np.float32
    assert info["opponent"] == "Walls"
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)
    assert isinstance(reward, float)
    env.close()


def test_an_episode_is_a_round_with_its_result_and_events_in_info() -> None:
    env = TankRoyaleEnv("SpinBot")
    observations, rewards, info = play_round(env, seed=1)
    result = info["round_result"]
    assert result["outcome"] in ("won", "lost", "draw")
    assert result["turns"] == len(rewards) + 1  # turn 1 is the reset; each step plays one more turn
    assert result["opponent"] == "SpinBot"
    assert all(((-1.0 <= o) & (o <= 1.0)).all() for o in observations)
    assert isinstance(info["events"], list)
    # The last reward carries the round's outcome (+20 won, -10 lost, as in `sacbot play`).
    assert (rewards[-1] >= 20.0 - 40) if result["outcome"] == "won" else rewards[-1] <= 0.0
    # The next reset starts the next round of the same game.
    _, info2 = env.reset()
    assert info2["round"] == result["round"] + 1


def test_events_reach_the_agent_through_info() -> None:
    env = TankRoyaleEnv("SpinBot")
    env.reset(seed=2)
    seen: set[str] = set()
    for _ in range(400):
        _, _, terminated, truncated, info = env.step(np.array([0.0, 0.0, 0.0, 1.0], np.float32))
        seen.update(e.type for e in info["events"])
        if terminated or truncated:
            break
    assert "BulletFiredEvent" in seen  # our own shots (full power whenever the gun is cool)
    assert "ScannedBotEvent" in seen  # the spinning radar


def test_same_seed_and_actions_give_the_same_round() -> None:
    a = play_round(TankRoyaleEnv("Crazy"), seed=5, action_seed=9)
    b = play_round(TankRoyaleEnv("Crazy"), seed=5, action_seed=9)
    assert len(a[0]) == len(b[0])
    assert all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True))
    assert a[1] == b[1]
    c = play_round(TankRoyaleEnv("Crazy"), seed=6, action_seed=9)
    assert not np.array_equal(a[0][0], c[0][0])


def test_max_turns_truncates_and_the_next_reset_starts_a_fresh_game() -> None:
    env = TankRoyaleEnv("Target", max_turns=20)
    env.reset(seed=1)
    for _ in range(18):
        _, _, terminated, truncated, _ = env.step(np.zeros(4, np.float32))
        assert not (terminated or truncated)
    _, _, terminated, truncated, info = env.step(np.zeros(4, np.float32))
    assert truncated and not terminated
    assert info["round_result"]["outcome"] == "truncated"
    _, info = env.reset()
    assert info["round"] == 1


def test_bad_arguments_are_user_errors() -> None:
    with pytest.raises(UserError):
        TankRoyaleEnv("NoSuchBot")
    with pytest.raises(UserError):
        TankRoyaleEnv("SpinBot", radar_mode="sideways")  # type: ignore[arg-type]
    with pytest.raises(UserError):
        VecTankRoyaleEnv(0, "SpinBot")
    with pytest.raises(UserError):
        TankRoyaleEnv("SpinBot", aim_shaping=-1.0)
    with pytest.raises(UserError, match="close_shaping"):
        TankRoyaleEnv("SpinBot", close_shaping=float("nan"))


def test_aim_shaping_changes_rewards_only_and_sums_to_its_telescoped_rest() -> None:
    """Opt-in shaping: the same round (states identical), rewards differ by gamma * Phi(s') - Phi(s) per step,
    with Phi 0 at the start and the end, so the difference sums to -(1 - gamma) * (sum of the inner Phis)."""
    plain = play_round(TankRoyaleEnv("Crazy"), seed=5, action_seed=9)
    shaped = play_round(TankRoyaleEnv("Crazy", aim_shaping=1.0), seed=5, action_seed=9)
    assert all(np.array_equal(x, y) for x, y in zip(plain[0], shaped[0], strict=True))
    diff = np.array(shaped[1]) - np.array(plain[1])
    assert np.abs(diff).max() > 0.1 and np.abs(diff).max() <= 2.0 + 1e-9  # |gamma Phi' - Phi| <= 2k
    assert abs(diff.sum()) <= (1 - 0.99) * len(diff) + 1e-6


def test_close_shaping_changes_rewards_only_and_sums_to_its_telescoped_rest() -> None:
    """As aim shaping: the same states; the difference sums to -(1 - gamma) * (the inner Phis), Phi <= k."""
    plain = play_round(TankRoyaleEnv("Crazy"), seed=5, action_seed=9)
    shaped = play_round(TankRoyaleEnv("Crazy", close_shaping=2.0), seed=5, action_seed=9)
    assert all(np.array_equal(x, y) for x, y in zip(plain[0], shaped[0], strict=True))
    diff = np.array(shaped[1]) - np.array(plain[1])
    assert np.abs(diff).max() > 0.01 and np.abs(diff).max() <= 2.0 + 1e-9
    assert abs(diff.sum()) <= (1 - 0.99) * 2.0 * len(diff) + 1e-6


def test_several_opponents_are_drawn_per_game() -> None:
    env = TankRoyaleEnv("SpinBot,Walls", rounds_per_game=1)
    drawn = {env.reset(seed=s)[1]["opponent"] for s in range(12)}
    assert drawn == {"SpinBot", "Walls"}


def test_vector_env_steps_arenas_like_the_single_env_and_autoresets() -> None:
    n = 4
    vec = VecTankRoyaleEnv(n, "SpinBot,Walls")
    assert vec.opponent_names == ["SpinBot", "Walls", "SpinBot", "Walls"]
    singles = [TankRoyaleEnv(name) for name in vec.opponent_names]
    obs, _ = vec.reset(seed=10)
    assert obs.shape == (n, 17) and obs.dtype == np.float32
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=10 + i)[0])
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(3000):
        actions = rng.uniform(-1, 1, (n, 4)).astype(np.float32)
        obs, rewards, terminated, truncated, infos = vec.step(actions)
        for i, env in enumerate(singles):
            o, r, term, trunc, info = env.step(actions[i])
            assert r == rewards[i] and term == terminated[i] and trunc == truncated[i]
            if term or trunc:
                finished += 1
                assert infos["_final_obs"][i]
                np.testing.assert_array_equal(infos["final_obs"][i], o)
                assert infos["final_info"][i]["round_result"] == info["round_result"]
                o, _ = env.reset()
            np.testing.assert_array_equal(obs[i], o)
        if finished >= 2:
            break
    assert finished >= 2


def test_make_vec_uses_the_vector_entry_point() -> None:
    vec = gymnasium.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", opponents="Target")
    obs, _ = vec.reset(seed=0)
    assert obs.shape == (3, 17)
    assert isinstance(vec.unwrapped, sacbot.env.VecTankRoyaleEnv)
    vec.close()


def test_worker_processes_give_the_same_results_as_in_process() -> None:
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1, 1, (400, 4, 4)).astype(np.float32)
    runs = []
    # In-process; two workers; this process stepping arena 0..1 beside one worker stepping 2..3.
    for workers, step_in_parent in ((0, False), (2, False), (1, True)):
        vec = VecTankRoyaleEnv(4, "SpinBot,Crazy", workers=workers, step_in_parent=step_in_parent)
        assert len(vec.envs) == (4 if workers == 0 else 2 if step_in_parent else 0)
        obs, _ = vec.reset(seed=7)
        trace = [obs]
        ends = []
        for batch in actions:
            obs, rewards, terminated, truncated, infos = vec.step(batch)
            trace += [obs, rewards, terminated, truncated]
            if infos:
                ends.append(
                    [
                        (i, infos["final_obs"][i].tolist(), infos["final_info"][i]["round_result"])
                        for i in np.flatnonzero(infos["_final_info"])
                    ]
                )
        vec.close()
        runs.append((trace, ends))
    (a, ends_a), *others = runs
    for b, ends_b in others:
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
        assert ends_a == ends_b
    # Rounds ended (and autoreset) in an arena stepped here and in one a worker steps.
    assert {i for end in ends_a for i, _, _ in end} >= {0, 2}


def test_bullet_inputs_follow_the_state_and_the_same_round_is_played() -> None:
    """Sizes with `bullet_inputs` append the critics' 18 inputs (the registered id takes the sizes too); the
    17 state entries, rewards and the round stay those of the plain env. Our own bullets show up in them once
    the bot fires at the enemy it has seen."""
    plain = play_round(TankRoyaleEnv("Target"), seed=5, action_seed=9)
    env = gymnasium.make(ENV_ID, opponent="Target", sizes=NetworkSizes(bullet_inputs=True)).unwrapped
    assert isinstance(env, TankRoyaleEnv)
    assert env.observation_space.shape == (35,)
    wide = play_round(env, seed=5, action_seed=9)
    assert len(wide[0]) == len(plain[0]) and wide[1] == plain[1]
    assert all(np.array_equal(w[:17], p) for w, p in zip(wide[0], plain[0], strict=True))
    bullets = np.stack(wide[0])[:, 17:]
    assert bullets.shape[1] == 18 and np.all(np.abs(bullets) <= 1.0)
    assert 0 < np.count_nonzero(bullets[:, 0]) < len(bullets)  # a slot fills once a shot is in flight


def test_wave_inputs_sit_between_the_state_and_the_bullet_inputs_and_last_the_game() -> None:
    """Sizes with `wave_inputs` add the 12 wave inputs after the state (the bullet inputs after them); the
    state, rewards and round stay those of the plain env. The record goes on into the game's next round and
    starts again with a new game."""
    plain = play_round(TankRoyaleEnv("Walls"), seed=5, action_seed=9)
    env = TankRoyaleEnv("Walls", sizes=NetworkSizes(wave_inputs=True, bullet_inputs=True))
    assert env.observation_space.shape == (47,)
    wide = play_round(env, seed=5, action_seed=9)
    bullets = play_round(
        TankRoyaleEnv("Walls", sizes=NetworkSizes(bullet_inputs=True)), seed=5, action_seed=9
    )
    assert len(wide[0]) == len(plain[0]) and wide[1] == plain[1]
    assert all(np.array_equal(w[:17], p) for w, p in zip(wide[0], plain[0], strict=True))
    assert all(np.array_equal(w[29:], b[17:]) for w, b in zip(wide[0], bullets[0], strict=True))
    waves = np.stack(wide[0])[:, 17:29]
    assert np.all(np.abs(waves) <= 1.0) and waves[-1, 0] > 0.0  # shots reached Walls: a record
    assert np.allclose(waves[-1, 1:10].sum(), 1.0)
    obs, _ = env.reset()  # the game's next round: the record goes on
    assert obs[17] == waves[-1, 0]
    obs, _ = env.reset(seed=6)  # a new game
    assert not obs[17:27].any()


def test_threat_inputs_see_the_enemys_real_shots_and_where_its_bullets_hit() -> None:
    """`threat_inputs=True` adds the 15 threat inputs after the wave inputs. Against a bot that fires every
    few turns, the waves the bot infers from energy drops match the engine's own bullets of that bot, shot
    for shot (speed and turn), and its hits on us enter the record; the state stays that of the plain env."""
    env = TankRoyaleEnv(
        "Gunner",
        radar_mode="lock",
        sizes=NetworkSizes(wave_inputs=True, threat_inputs=True),
        rounds_per_game=3,
    )
    assert env.observation_space.shape == (17 + 12 + 15,)
    obs, _ = env.reset(seed=3)
    fired: list[tuple[int, int, float]] = []  # the engine's: (round, turn, speed) of the enemy's new bullets
    inferred: list[tuple[int, int, float]] = []  # the waves that appeared in the memory, the same
    known: set[tuple[int, int]] = set()  # (round, bullet id): ids restart every round
    hits = 0
    for round_ in range(3):  # three rounds, the teacher driving (it is hit often)
        while True:
            before = {w[:4] for w in env.memory.threats}  # a wave: its origin, turn and speed (not its flag)
            action = teacher_action(torch.from_numpy(obs[None, :17]), 800.0, 600.0, False)[0].numpy()
            obs, _, terminated, _, info = env.step(action)
            assert np.all(np.abs(obs) <= 1.0)
            turn = info["turn"]
            assert env.game is not None
            for b in env.game.bullets:
                if b.owner_id == env.opponent_id and (round_, b.bullet_id) not in known:
                    known.add((round_, b.bullet_id))
                    fired.append((round_, turn, b.speed))
            inferred += [(round_, turn, w[3]) for w in env.memory.threats if w[:4] not in before]
            hits += sum(e.type == "BulletHitBotEvent" and e.victim_id == env.agent_id for e in info["events"])
            if terminated:
                break
        if round_ < 2:  # the game's next round (a reset after the last would start a new game)
            obs, _ = env.reset()
    matched = sum((r, t) in {(q, u) for q, u, w in inferred if abs(v - w) < 0.05} for r, t, v in fired)
    assert len(fired) > 20 and matched >= 0.95 * len(fired) and len(inferred) <= 1.05 * len(fired)
    recorded = sum(env.memory.threat_bins)  # each hit weighs 0.97 of the next: all of them sum to this
    assert hits > 10 and recorded >= 0.95 * (1.0 - 0.97**hits) / 0.03
    threats = obs[29:]
    assert threats[4] == pytest.approx(recorded / (recorded + 3.0), abs=1e-6)
    assert np.sum(threats[5:14]) == pytest.approx(1.0, abs=1e-5)


def test_worker_processes_carry_the_bullet_inputs() -> None:
    actions = np.random.default_rng(4).uniform(-1, 1, (200, 3, 4)).astype(np.float32)
    traces = []
    for workers in (0, 1):
        vec = VecTankRoyaleEnv(
            3, "Target,SpinBot", workers=workers, step_in_parent=True, sizes=NetworkSizes(bullet_inputs=True)
        )
        obs, _ = vec.reset(seed=2)
        trace = [obs]
        for batch in actions:
            trace.append(vec.step(batch)[0])
        vec.close()
        traces.append(np.stack(trace))
    assert traces[0].shape == (201, 3, 35) and np.array_equal(traces[0], traces[1])
    assert np.count_nonzero(traces[0][..., 17]) > 0
