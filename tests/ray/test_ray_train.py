"""`sacbot train-fast --ray`: runners on a local Ray instance (2 CPUs) feed the learner; checkpoints, the
update-to-data ratio held, a killed runner restarted by Ray, and a resume from the folder."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import latest_path, restore_trainer
from sacbot.distributed.learner import RayProgress, train_ray

SMALL = dict(
    runners=2, envs=2, seed=3, warmup_steps=200, save_every=800, sync_every=2, chunk_steps=32,
    max_turns=100, best_window=1, device="cpu", num_cpus=2, replay_keep=5_000,
)  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False)
    yield
    ray.shutdown()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_two_runners_train_checkpoint_and_hold_the_ratio(tmp_path: Path) -> None:
    out = tmp_path / "w"
    # Rounds of at most 30 turns: each runner call (32 turns per arena) ends a round in every arena, so a
    # runner that delivered any chunk has rounds in rounds.jsonl however unevenly Ray shares the calls.
    short = {**SMALL, "max_turns": 30}
    summary = train_ray("SpinBot,Target", out, steps=1_600, utd=0.02, **short)  # type: ignore[arg-type]
    assert summary.env_steps >= 1_600 and summary.updates > 0
    assert all(len(p) == 1 for p in summary.runner_pids)  # both runners ran, neither restarted
    fresh = SacTrainer(TrainerConfig(device="cpu"))
    meta = restore_trainer(latest_path(out), fresh)
    assert meta is not None and meta.env_steps == summary.env_steps and fresh.updates == summary.updates
    metrics = _lines(out / "training_metrics.jsonl")
    last = metrics[-1]
    assert last["written_by"] == "sacbot train-fast" and last["runners"] == 2
    # Updates are owed as data arrives and paid before more is asked for: the ratio held is the target's,
    # less at most the updates of one runner call (and any waived while no window was complete).
    paid = summary.env_steps - 200
    assert last["utd_target"] == 0.02
    assert summary.updates + int(last["updates_waived"]) <= 0.02 * paid + 1e-9
    assert summary.updates + int(last["updates_waived"]) >= 0.02 * paid - 0.02 * 2 * 32 - 1
    assert abs(float(last["utd_held"]) - summary.updates / paid) < 1e-4
    assert float(last["bytes_per_env_step"]) > 0 and float(last["env_steps_per_s"]) > 0
    rounds = _lines(out / "rounds.jsonl")
    assert len(rounds) == summary.rounds > 0 and {r["runner"] for r in rounds} == {0, 1}
    assert (out / "replay.npz").is_file()
    # Resume: a second run on the same folder goes on from latest.zip's counters.
    again = train_ray("SpinBot,Target", out, steps=400, utd=0.02, **short)  # type: ignore[arg-type]
    assert again.env_steps >= summary.env_steps + 400 and again.updates >= summary.updates
    assert again.rounds >= summary.rounds


def test_a_killed_runner_is_restarted_and_training_goes_on(tmp_path: Path) -> None:
    killed: list[int] = []

    def kill_once(progress: RayProgress) -> None:
        if not killed and progress.run_env_steps >= 256:
            old = ray.get(progress.handles[0].pid.remote())
            ray.kill(progress.handles[0], no_restart=False)
            killed.append(old)
            # The kill lands asynchronously; calls made while Ray restarts the actor wait for the new process.
            deadline = time.monotonic() + 120
            while ray.get(progress.handles[0].pid.remote(), timeout=120) == old:
                assert time.monotonic() < deadline, "runner 0 was not restarted"
                time.sleep(0.05)

    summary = train_ray(
        "SpinBot",
        tmp_path / "w",
        steps=1_600,
        utd=0.0,
        view=kill_once,
        **SMALL,  # type: ignore[arg-type]
    )
    assert killed and summary.env_steps >= 1_600
    # A new process: its pid is recorded when a chunk of its steps comes in (`ingest`).
    assert len(summary.runner_pids[0]) == 2 and killed[0] in summary.runner_pids[0]
    assert summary.figures["runner_restarts"] >= 1 and summary.figures["runners_alive"] == 2
    # Runner 1 finished rounds; runner 0's new process may not have, in this budget, on a loaded machine.
    rounds = _lines(tmp_path / "w" / "rounds.jsonl")
    runners = {r["runner"] for r in rounds}
    assert 1 in runners and runners <= {0, 1}


def test_runners_pause_while_the_learner_lags(tmp_path: Path) -> None:
    def watch(progress: RayProgress) -> None:
        # Never more data ahead of the updates than the cap plus the calls already in flight.
        assert progress.run_env_steps - 200 - (progress.run_updates + progress.waived) / 0.2 <= 128 + 2 * 64

    small = {**SMALL, "chunk_steps": 32}
    summary = train_ray(
        "SpinBot",
        tmp_path / "w",
        steps=700,
        utd=0.2,
        max_ahead=128,
        view=watch,
        **small,  # type: ignore[arg-type]
    )
    last = _lines(tmp_path / "w" / "training_metrics.jsonl")[-1]
    # The runners (64 env steps a call) outpace the learner (0.2 x 64 = 12.8 updates a call): they were held.
    assert float(last["runner_paused_s"]) > 0 and summary.figures["runner_paused_s"] > 0
    paid = summary.env_steps - 200
    assert summary.updates + int(last["updates_waived"]) <= 0.2 * paid + 1e-9
    assert summary.updates + int(last["updates_waived"]) >= 0.2 * paid - 0.2 * 64 - 1


def test_the_runners_act_with_the_learner_s_extra_inputs_coloured_noise_and_gun_spread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sacbot.agent.sizes import NetworkSizes
    from sacbot.checkpoint import read_meta
    from sacbot.checkpoint.replay_file import load_replay

    monkeypatch.setenv("SACBOT_ANGLE_INPUTS", "1")
    monkeypatch.setenv("SACBOT_WAVE_INPUTS", "1")  # the runners' actors read the wave inputs
    monkeypatch.setenv("SACBOT_THREAT_INPUTS", "1")  # ... and the threat inputs
    monkeypatch.setenv("SACBOT_BULLET_INPUTS", "1")  # the runners' arenas store the critics' inputs too
    monkeypatch.setenv("SACBOT_NOISE_BETA", "1")  # each runner draws from one pink stream per arena
    monkeypatch.setenv("SACBOT_GUN_SPREAD", "4")  # ... its gun-turn entry four times wider
    monkeypatch.setenv("SACBOT_HINDSIGHT_AIM", "5")  # the learner labels the runners' rounds as they come in
    out = tmp_path / "w"
    summary = train_ray("SpinBot", out, steps=600, utd=0.02, **SMALL)  # type: ignore[arg-type]
    assert summary.env_steps >= 600 and summary.updates > 0
    meta = read_meta(latest_path(out))
    assert meta is not None and meta.network_sizes["angle_inputs"] is True
    assert meta.extra["angle_inputs"] is True and meta.extra["noise_beta"] == 1.0
    assert meta.extra["gun_spread"] == 4.0 and meta.extra["bullet_inputs"] is True
    assert meta.network_sizes["wave_inputs"] is True and meta.extra["wave_inputs"] is True
    assert meta.network_sizes["threat_inputs"] is True and meta.extra["threat_inputs"] is True
    assert meta.extra["hindsight_aim"] == 5.0
    passes = [json.loads(line) for line in (out / "training_metrics.jsonl").read_text().splitlines()]
    assert any((p.get("hindsight_aim_share") or 0.0) > 0.0 for p in passes)
    sizes = NetworkSizes(angle_inputs=True, wave_inputs=True, threat_inputs=True, bullet_inputs=True)
    restore_trainer(latest_path(out), SacTrainer(TrainerConfig(sizes=sizes, device="cpu")))
    replay = load_replay(out / "replay.npz", sizes.stored_dim, sizes.action_dim, sizes.hidden)
    assert replay["obs"].shape[1] == 17 + 12 + 15 + 18 and np.count_nonzero(replay["obs"][:, 17]) > 0
    assert np.count_nonzero(replay["obs"][:, 29]) > 0  # SpinBot fired: its waves in flight
