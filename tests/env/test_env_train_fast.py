"""`sacbot train-fast`: trains with the learner's trainer; writes checkpoints that play's loader accepts."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import latest_path, load_for_game, opponent_best_path, read_meta, restore_trainer
from sacbot.env.train import train_fast
from sacbot.errors import UserError
from sacbot.settings import load_sacbot_settings


def test_train_fast_writes_resumable_checkpoints_and_best_slots(tmp_path: Path) -> None:
    out = tmp_path / "weights"
    summary = train_fast(
        "SpinBot,Target", out, steps=1200, envs=4, seed=1, updates_per_step=0.1, warmup_steps=400,
        save_every=600, best_window=1, max_turns=150,
    )  # fmt: skip
    assert summary.env_steps >= 1200 and summary.updates > 0 and summary.rounds >= 8
    fresh = SacTrainer(TrainerConfig(device="cpu"))
    meta = restore_trainer(latest_path(out), fresh)
    assert meta is not None and meta.env_steps == summary.env_steps and fresh.updates == summary.updates
    rounds = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert len(rounds) == summary.rounds
    assert {r["opponent"] for r in rounds} == {"SpinBot", "Target"}
    assert all(r["written_by"] == "sacbot train-fast" for r in rounds)
    assert json.loads((out / "round_counter.json").read_text())["rounds"] == summary.rounds
    # With max_turns=150 most rounds are truncated (no score); a finished one fills its one-round window.
    finished = {r["opponent"] for r in rounds if r["outcome"] != "truncated"}
    for name in finished:
        assert opponent_best_path(out, name).is_file()
        loaded = load_for_game(out, name, fresh.array_specs())  # the slot order `sacbot play` loads
        assert loaded is not None and loaded.slot == f"opponents/{name}"
    # A second run with the same --out resumes: counters go on from the first run.
    again = train_fast("Target", out, steps=200, envs=2, seed=1, updates_per_step=0.0, max_turns=150)
    assert again.env_steps == summary.env_steps + 200 and again.steps_run == 200
    assert again.rounds >= summary.rounds
    # The kept replay came back with it, so a resumed run needs no warm-up: it updates from its first step.
    third = train_fast("Target", out, steps=40, envs=2, seed=1, updates_per_step=0.5, warmup_steps=400,
                       max_turns=150)  # fmt: skip
    assert third.updates == again.updates + 10


def test_cli_rejects_an_unknown_opponent_with_one_line(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "sacbot", "train-fast", "--opponents", "SpinBot,Nobody"]
    command += ["--out", str(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ})
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Nobody" in result.stderr
    assert not any(tmp_path.iterdir())


def test_cli_takes_the_trainer_device_from_sacbot_device(tmp_path: Path) -> None:
    """SACBOT_DEVICE reaches train-fast's learner, as it does `sacbot play`'s: cuda asked for where torch sees
    none (any GPU hidden) is one line and exit 2, not a silent CPU run."""
    command = [sys.executable, "-m", "sacbot", "train-fast", "--opponents", "Target", "--steps", "50"]
    command += ["--envs", "1", "--out", str(tmp_path / "run")]
    env = {**os.environ, "SACBOT_DEVICE": "cuda", "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and "no CUDA device" in result.stderr
    assert not (tmp_path / "run" / "latest.zip").exists()


def test_sigterm_saves_where_the_run_stands_and_the_rerun_resumes_with_the_replay(tmp_path: Path) -> None:
    """A supervisor's `kill` loses nothing: train-fast saves at once, keeps its replay and exits 130."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "sacbot", "train-fast", "--opponents", "Target", "--envs", "2"]
    command += ["--out", str(out), "--save-every", "300", "--seed", "3"]
    proc = subprocess.Popen(
        [*command, "--steps", "100000000"], stderr=subprocess.PIPE, text=True, env={**os.environ}
    )
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while sum("saved" in line for line in lines) < 2:
            line = proc.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=120)
    finally:
        proc.kill()
    err = "".join(lines) + rest
    assert proc.returncode == 130, err
    assert "interrupted: saving where the run stands" in rest and "run the same command to resume" in rest
    last = int(re.findall(r"saved \S+ \(env steps (\d+)", err)[-1])
    assert re.search(r"interrupted: saving where the run stands\n.*saved ", rest)  # a save of its own
    meta = read_meta(latest_path(out))
    assert meta is not None and meta.env_steps == last
    assert (out / "replay.npz").is_file() and "kept" in rest
    again = subprocess.run(
        [*command, "--steps", "100"], capture_output=True, text=True, timeout=300, env={**os.environ}
    )
    assert again.returncode == 0, again.stderr
    assert f"resumed from {latest_path(out)} (env steps {last}" in again.stderr
    assert re.search(r"replay: \d+ kept rounds \(\d+ steps\)", again.stderr), again.stderr


def test_train_fast_keeps_its_whole_replay_unless_the_setting_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sacbot.cli.fast import _replay_keep

    monkeypatch.delenv("SACBOT_REPLAY_KEEP", raising=False)
    assert _replay_keep() == TrainerConfig().replay_capacity  # a resume goes on with all the data it had
    monkeypatch.setenv("SACBOT_REPLAY_KEEP", "300")
    assert _replay_keep() == 300


@pytest.mark.parametrize(("target", "rises"), [(10.0, True), (-40.0, False)])
def test_train_fast_tunes_the_temperature_toward_the_entropy_target_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: float, rises: bool
) -> None:
    monkeypatch.setenv("SACBOT_TARGET_ENTROPY", str(target))  # as a campaign's [bot] target_entropy sets it
    out = tmp_path / "weights"
    summary = train_fast(
        "Target", out, steps=300, envs=2, seed=3, updates_per_step=0.5, warmup_steps=100, max_turns=100
    )
    assert summary.updates >= 20
    trainer = SacTrainer(TrainerConfig(device="cpu"))
    meta = restore_trainer(latest_path(out), trainer)
    assert meta is not None and meta.extra["target_entropy"] == target
    # The policy's entropy (about 0 to -4 here) lies below +10 and above -40: alpha climbs or falls from 0.2.
    assert (trainer.alpha > TrainerConfig().init_alpha) is rises
    # Resumed without the setting, the run keeps the target its checkpoint was trained with, as play does.
    monkeypatch.delenv("SACBOT_TARGET_ENTROPY")
    train_fast("Target", out, steps=40, envs=2, seed=3, updates_per_step=0.5, warmup_steps=0, max_turns=100)
    assert (meta := read_meta(latest_path(out))) is not None and meta.extra["target_entropy"] == target


def test_train_fast_with_wave_threat_and_lead_inputs_stores_them_and_resumes_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SACBOT_WAVE_INPUTS=1, SACBOT_THREAT_INPUTS=1 and SACBOT_LEAD_INPUTS=1 (a campaign's [bot] wave_inputs,
    threat_inputs, lead_inputs) build networks that read those inputs and a replay that stores the first two
    (the lead inputs are computed from the state); a resume without the settings goes on with the
    checkpoint's networks."""
    from sacbot.agent.sizes import NetworkSizes
    from sacbot.checkpoint.replay_file import load_replay

    monkeypatch.setenv("SACBOT_WAVE_INPUTS", "1")
    monkeypatch.setenv("SACBOT_THREAT_INPUTS", "1")
    monkeypatch.setenv("SACBOT_LEAD_INPUTS", "1")
    out = tmp_path / "weights"
    said: list[str] = []
    first = train_fast("Walls", out, steps=600, envs=2, seed=3, updates_per_step=0.2, warmup_steps=200,
                       max_turns=300, replay_keep=10_000, log=said.append)  # fmt: skip
    # The run says so at its start, in play's words.
    assert "wave inputs on: the networks also read where the enemy was when our past shots reached it" in said
    assert (
        "threat inputs on: the networks also read the enemy's shots in flight and where its bullets hit us"
        in said
    )
    assert "lead inputs on: the networks also read where a linear aim points" in said
    assert not any(line.startswith(("angle inputs on", "bullet inputs on", "log std bound")) for line in said)
    meta = read_meta(latest_path(out))
    assert meta is not None and meta.network_sizes["wave_inputs"] is True
    assert meta.extra["wave_inputs"] is True and meta.extra["threat_inputs"] is True
    assert meta.network_sizes["lead_inputs"] is True and meta.extra["lead_inputs"] is True
    sizes = NetworkSizes(wave_inputs=True, threat_inputs=True, lead_inputs=True)
    replay = load_replay(out / "replay.npz", sizes.stored_dim, sizes.action_dim, sizes.hidden)
    assert replay["obs"].shape[1] == 17 + 12 + 15 and np.count_nonzero(replay["obs"][:, 17]) > 0
    assert np.count_nonzero(replay["obs"][:, 29]) > 0  # Walls fired: waves of its shots in flight
    monkeypatch.delenv("SACBOT_WAVE_INPUTS")
    monkeypatch.delenv("SACBOT_THREAT_INPUTS")
    monkeypatch.delenv("SACBOT_LEAD_INPUTS")
    resumed = train_fast("Walls", out, steps=100, envs=2, seed=3, updates_per_step=0.2, warmup_steps=0,
                         max_turns=300, replay_keep=10_000)  # fmt: skip
    assert resumed.updates > first.updates > 0
    assert (meta := read_meta(latest_path(out))) is not None and meta.network_sizes["wave_inputs"] is True
    assert meta.network_sizes["threat_inputs"] is True and meta.network_sizes["lead_inputs"] is True


def test_train_fast_takes_the_critic_warmup_anchor_and_surf_shaping_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SACBOT_CRITIC_WARMUP holds the actor while the critics learn (counted in the run's updates, so a
    resumed run's start counts); SACBOT_ANCHOR pulls toward the actor the run resumed from;
    SACBOT_SURF_SHAPING needs the threat inputs and is recorded."""
    from sacbot.checkpoint import load_checkpoint

    out = tmp_path / "weights"
    monkeypatch.setenv("SACBOT_SURF_SHAPING", "10")
    with pytest.raises(UserError, match="surf_shaping needs the threat inputs"):
        train_fast("Walls", out, steps=40, envs=2, seed=3, max_turns=100)
    monkeypatch.setenv("SACBOT_THREAT_INPUTS", "1")
    train_fast("Walls", out, steps=600, envs=2, seed=3, updates_per_step=0.5, warmup_steps=200, max_turns=100)
    before, meta = load_checkpoint(latest_path(out))
    assert meta is not None and meta.extra["surf_shaping"] == 10.0 and meta.updates > 0
    monkeypatch.setenv("SACBOT_CRITIC_WARMUP", str(meta.updates + 1000))
    train_fast("Walls", out, steps=300, envs=2, seed=3, updates_per_step=0.5, warmup_steps=0, max_turns=100)
    after, again = load_checkpoint(latest_path(out))
    assert again is not None and again.updates > meta.updates
    actor = [k for k in before if k.startswith("actor.")]
    assert actor and all(np.array_equal(before[k], after[k]) for k in actor)
    assert np.array_equal(before["log_alpha"], after["log_alpha"])
    assert not all(np.array_equal(before[k], after[k]) for k in before if k.startswith("critic1."))
    metrics = (out / "training_metrics.jsonl").read_text().splitlines()
    assert "anchor_loss" not in json.loads(metrics[-1])
    monkeypatch.setenv("SACBOT_CRITIC_WARMUP", "0")
    monkeypatch.setenv("SACBOT_ANCHOR", "50")
    train_fast("Walls", out, steps=300, envs=2, seed=3, updates_per_step=0.5, warmup_steps=0, max_turns=100)
    last = json.loads((out / "training_metrics.jsonl").read_text().splitlines()[-1])
    assert last["anchor_loss"] > 0.0  # the actor moved off the one it resumed from, and the term says so


def test_train_fast_with_the_gun_offset_lets_the_teacher_lead_in_its_terms_and_resumes_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SACBOT_GUN_OFFSET=1 (a campaign's [bot] gun_offset): the networks' gun entry is an offset from the
    enemy's bearing, the teacher's led steps are stored in those terms, the checkpoint records it and a resume
    without the setting keeps it."""
    import torch

    from sacbot.agent.sizes import NetworkSizes
    from sacbot.agent.teacher import teacher_action
    from sacbot.checkpoint.replay_file import load_replay

    monkeypatch.setenv("SACBOT_GUN_OFFSET", "1")
    out = tmp_path / "weights"
    said: list[str] = []
    train_fast("Walls", out, steps=600, envs=2, seed=3, updates_per_step=0.2, warmup_steps=200, max_turns=300,
               replay_keep=10_000, teacher_lead=600, log=said.append)  # fmt: skip
    assert "gun offset on: the actor's gun entry is where the gun points from the enemy's bearing" in said
    meta = read_meta(latest_path(out))
    assert meta is not None and meta.network_sizes["gun_offset"] is True and meta.extra["gun_offset"] is True
    sizes = NetworkSizes(gun_offset=True)
    replay = load_replay(out / "replay.npz", sizes.stored_dim, sizes.action_dim, sizes.hidden)
    states = torch.from_numpy(replay["obs"])  # each step's state, beside its action
    seen = replay["obs"][:, 12] < 1.0  # an enemy seen (before it the teacher spins its gun either way)
    gun = replay["action"][:, 2]
    offset = teacher_action(states, gun_offset=True)[:, 2].numpy()
    turn = teacher_action(states)[:, 2].numpy()
    # The led steps' gun entries lie about the noise (std 0.3) from the teacher's offsets, not its turns.
    assert np.mean((gun - offset)[seen] ** 2) < 0.15 < np.mean((gun - turn)[seen] ** 2)
    monkeypatch.delenv("SACBOT_GUN_OFFSET")
    train_fast("Walls", out, steps=100, envs=2, seed=3, updates_per_step=0.2, warmup_steps=0, max_turns=300)
    assert (meta := read_meta(latest_path(out))) is not None and meta.network_sizes["gun_offset"] is True


def test_train_fast_plays_with_coloured_noise_when_the_setting_says(tmp_path: Path) -> None:
    """A fresh actor (spread ~1 before tanh, no updates): the replay's actions drift as the noise's colour
    says, and the checkpoint records it."""
    from sacbot.agent.sizes import NetworkSizes
    from sacbot.checkpoint.replay_file import load_replay

    sizes = NetworkSizes()
    lag1 = {}
    for beta in (0.0, 2.0):
        out = tmp_path / f"beta{beta:g}"
        coloured = load_sacbot_settings().model_copy(update={"noise_beta": beta})
        train_fast("SpinBot", out, steps=1600, envs=4, seed=3, updates_per_step=0.0, max_turns=400,
                   settings=coloured, replay_keep=10_000)  # fmt: skip
        assert (meta := read_meta(latest_path(out))) is not None and meta.extra["noise_beta"] == beta
        replay = load_replay(out / "replay.npz", sizes.state_dim, sizes.action_dim, sizes.hidden)
        pre = np.arctanh(np.clip(replay["action"], -0.999, 0.999))  # mu + std * eps, per step
        ends = np.cumsum(replay["lengths"])
        pairs = [(pre[t], pre[t + 1]) for t in range(len(pre) - 1) if t + 1 not in ends]
        a, b = (np.stack(side) for side in zip(*pairs, strict=True))
        lag1[beta] = float(np.mean([np.corrcoef(a[:, j], b[:, j])[0, 1] for j in range(sizes.action_dim)]))
    assert lag1[0.0] < 0.3 and lag1[2.0] > 0.9, lag1  # measured: 0.009 and 0.995


def test_train_fast_draws_the_gun_turn_wider_when_the_setting_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bounded actor (std 0.135 before tanh) that never updates: with SACBOT_GUN_SPREAD=4 the replay's gun
    turns spread about four times as wide around the policy's mean, the other entries as before."""
    from sacbot.agent.exploration import GUN_TURN
    from sacbot.agent.inference import FastActor
    from sacbot.agent.sizes import NetworkSizes
    from sacbot.checkpoint.replay_file import load_replay

    sizes = NetworkSizes(log_std_max=-2.0)
    spread = {}
    for k in (1.0, 4.0):
        monkeypatch.setenv("SACBOT_GUN_SPREAD", str(k))  # as a campaign's [bot] gun_spread sets it
        out = tmp_path / f"spread{k:g}"
        train_fast("SpinBot", out, steps=800, envs=4, seed=3, updates_per_step=0.0, max_turns=200,
                   sizes=sizes, replay_keep=10_000)  # fmt: skip
        assert (meta := read_meta(latest_path(out))) is not None and meta.extra["gun_spread"] == k
        trainer = SacTrainer(TrainerConfig(sizes=sizes, device="cpu"))
        restore_trainer(latest_path(out), trainer)
        replay = load_replay(out / "replay.npz", sizes.state_dim, sizes.action_dim, sizes.hidden)
        mean, _ = FastActor(trainer.actor_arrays(), sizes).step_batch(replay["obs"], replay["hidden"])
        pre = np.arctanh(np.clip(replay["action"], -0.999, 0.999)) - np.arctanh(mean)  # std * eps
        spread[k] = pre.std(axis=0)
    ratio = spread[4.0] / spread[1.0]
    assert 3.5 < ratio[GUN_TURN] < 4.5, ratio
    assert all(0.85 < ratio[j] < 1.15 for j in range(sizes.action_dim) if j != GUN_TURN), ratio
    monkeypatch.setenv("SACBOT_GUN_SPREAD", "0.5")
    with pytest.raises(UserError, match="SACBOT_GUN_SPREAD"):
        train_fast("SpinBot", tmp_path / "bad", steps=10, envs=1)


def test_bullet_inputs_turned_on_in_a_run_keep_its_critics_and_train_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`scripts/add_bullet_inputs.py` widens a run's critics with zero weights (the same Q values), drops the
    replay its states cannot fill, and train-fast resumes it with SACBOT_BULLET_INPUTS=1, storing them."""
    import shutil

    import torch

    from sacbot.agent.sizes import NetworkSizes
    from sacbot.checkpoint.replay_file import load_replay

    out = tmp_path / "run"
    plain = NetworkSizes(angle_inputs=True)
    train_fast("Target", out, steps=800, envs=4, seed=3, updates_per_step=0.2, warmup_steps=200,
               max_turns=100, sizes=plain, replay_keep=10_000)  # fmt: skip
    shutil.copy(latest_path(out), tmp_path / "before.zip")
    script = Path(__file__).parents[2] / "scripts" / "add_bullet_inputs.py"
    done = subprocess.run(
        [sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert not (out / "replay.npz").exists() and "18 bullet inputs after column 25" in done.stdout
    wide = NetworkSizes(angle_inputs=True, bullet_inputs=True)
    old, new = SacTrainer(TrainerConfig(sizes=plain)), SacTrainer(TrainerConfig(sizes=wide))
    restore_trainer(tmp_path / "before.zip", old)
    meta = restore_trainer(latest_path(out), new)
    assert meta is not None and meta.network_sizes["bullet_inputs"] is True and new.updates == old.updates
    rng = np.random.default_rng(0)
    stored = torch.from_numpy(rng.uniform(-1, 1, (5, 3, 35)).astype(np.float32))
    act = torch.from_numpy(rng.uniform(-1, 1, (5, 3, 4)).astype(np.float32))
    from sacbot.agent.features import input_columns

    def q(trainer: SacTrainer, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return trainer.critic.sequence_tm(x, trainer.critic.initial_hidden(3))[0]

    state = stored[..., :17]
    widened = torch.cat([state, torch.stack(input_columns(state, plain, torch), -1)], -1)
    before = q(old, torch.cat([widened, act], -1))
    after = q(new, torch.cat([widened, stored[..., 17:], act], -1))
    assert torch.allclose(before, after, atol=1e-6)
    again = subprocess.run(
        [sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0 and "already on" in again.stdout
    monkeypatch.setenv("SACBOT_BULLET_INPUTS", "1")  # as a campaign's [bot] bullet_inputs sets it
    monkeypatch.setenv("SACBOT_ANGLE_INPUTS", "1")
    resumed = train_fast("Target", out, steps=800, envs=4, seed=3, updates_per_step=0.2, warmup_steps=200,
                         max_turns=100, replay_keep=10_000)  # fmt: skip
    assert resumed.updates > old.updates > 0
    replay = load_replay(out / "replay.npz", wide.stored_dim, wide.action_dim, wide.hidden)
    assert replay["obs"].shape[1] == 35 and np.count_nonzero(replay["obs"][:, 17]) > 0
    missing = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "nothing")], capture_output=True, text=True, timeout=120
    )
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr
