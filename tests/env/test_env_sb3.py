"""Stable-Baselines3 on the environment: its own env checker passes, and its SAC trains on it."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from stable_baselines3 import SAC
from stable_baselines3.common.env_checker import check_env

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import CheckpointMeta, save_checkpoint
from sacbot.env import ENV_ID

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # SB3's small MLP updates: a second thread only contends on 2 cores
    yield
    torch.set_num_threads(before)


def test_passes_stable_baselines3_env_checker() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 reports what it dislikes as warnings: any one fails here
        check_env(gymnasium.make(ENV_ID), warn=True)
        check_env(gymnasium.make(ENV_ID, opponent="Target,Walls", max_turns=50), warn=True)


def test_sb3_sac_learns_a_few_hundred_steps(one_torch_thread: None) -> None:
    env = gymnasium.make(ENV_ID, opponent="Target", max_turns=100)  # rounds end within the run
    model = SAC("MlpPolicy", env, learning_starts=100, batch_size=32, buffer_size=1_000, seed=1, device="cpu")
    model.learn(300)
    assert model.num_timesteps == 300 and model._n_updates == 200
    assert model.replay_buffer is not None and model.replay_buffer.size() == 300
    episodes = model.ep_info_buffer  # its Monitor saw rounds end (truncated at 100 turns)
    assert episodes is not None and len(episodes) >= 2
    action, _ = model.predict(np.zeros(17, np.float32), deterministic=True)
    assert action.shape == (4,) and np.all(np.abs(action) <= 1.0)


def test_the_example_trains_evaluates_and_compares_with_a_sacbot_checkpoint(tmp_path: Path) -> None:
    trainer = SacTrainer(TrainerConfig(device="cpu", seed=3))
    checkpoint = tmp_path / "ours.zip"
    meta = CheckpointMeta(network_sizes=trainer.network_sizes(), extra={"radar_mode": "lock"})
    save_checkpoint(checkpoint, trainer.state_arrays(), meta)
    command = [
        sys.executable,
        str(REPO / "examples" / "sb3_sac.py"),
        "--steps",
        "150",
        "--learning-starts",
        "100",
    ]
    command += ["--eval-rounds", "2", "--opponent", "Walls", "--compare", str(checkpoint)]
    command += ["--save", str(tmp_path / "sb3.zip")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "SB3 SAC: 150 env steps, 50 updates in" in result.stdout and "vs Walls" in result.stdout
    rows = re.findall(r"won (\d)/2 rounds \(win rate ([\d.]+)\), score share ([\d.]+)", result.stdout)
    assert len(rows) == 2 and all(int(w) / 2 == float(rate) for w, rate, _ in rows)
    assert f"sacbot {checkpoint} (deterministic, radar lock)" in result.stdout
    assert SAC.load(tmp_path / "sb3.zip", device="cpu").num_timesteps == 150
