"""The wave inputs' decay and aim (`NetworkSizes.wave_decay`, SACBOT_WAVE_DECAY; `NetworkSizes.wave_aim`,
SACBOT_WAVE_AIM): what the inputs mean travels with the networks, from the setting or the checkpoint to every
reader of the wave record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sacbot.agent.sizes import WAVE_DECAY, NetworkSizes
from sacbot.checkpoint import CheckpointMeta, latest_path, read_meta
from sacbot.env import TankRoyaleEnv, VecTankRoyaleEnv
from sacbot.env.train import train_fast
from sacbot.export.policy import sizes_from_dict
from sacbot.runtime.startup import network_sizes_for, sizes_said, wave_aim_for, wave_decay_for
from sacbot.settings import load_sacbot_settings


def test_the_decay_is_the_settings_else_the_checkpoints_else_the_default() -> None:
    built = CheckpointMeta(network_sizes={**NetworkSizes().as_dict(), "wave_decay": 0.8})
    old_sizes = {k: v for k, v in NetworkSizes().as_dict().items() if k != "wave_decay"}
    before = CheckpointMeta(network_sizes=old_sizes)
    assert wave_decay_for(None, None) == WAVE_DECAY == 0.97
    assert wave_decay_for(None, built) == 0.8 and wave_decay_for(0.5, built) == 0.5
    assert wave_decay_for(None, before) == WAVE_DECAY  # a checkpoint from before the setting
    for odd in (7.0, 0.0, "0.5", True):
        assert wave_decay_for(None, CheckpointMeta(network_sizes={"wave_decay": odd})) == WAVE_DECAY
    assert sizes_from_dict({}).wave_decay == WAVE_DECAY
    assert sizes_from_dict({"wave_decay": 0.5}).wave_decay == 0.5
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="wave_decay"):
            sizes_from_dict({"wave_decay": bad})


def test_the_aim_is_the_settings_else_the_checkpoints_else_the_peak() -> None:
    built = CheckpointMeta(network_sizes={**NetworkSizes().as_dict(), "wave_aim": "virtual"})
    assert wave_aim_for(None, None) == "peak" and wave_aim_for(None, built) == "virtual"
    assert wave_aim_for("peak", built) == "peak"
    for odd in ("best", 1, None):
        assert wave_aim_for(None, CheckpointMeta(network_sizes={"wave_aim": odd})) == "peak"
    assert sizes_from_dict({}).wave_aim == "peak"
    assert sizes_from_dict({"wave_aim": "virtual"}).wave_aim == "virtual"
    with pytest.raises(ValueError, match="wave_aim"):
        sizes_from_dict({"wave_aim": "best"})
    said = sizes_said(NetworkSizes(wave_inputs=True, wave_aim="virtual"), training=False)
    assert any(line.startswith("wave inputs' aim virtual") for line in said)
    assert not any("aim" in line for line in sizes_said(NetworkSizes(wave_inputs=True), training=False))


def test_the_setting_builds_the_networks_and_a_run_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SACBOT_WAVE_INPUTS", "1")
    monkeypatch.setenv("SACBOT_WAVE_DECAY", "0.5")
    monkeypatch.setenv("SACBOT_WAVE_AIM", "virtual")
    sizes = network_sizes_for(load_sacbot_settings(), None)
    assert sizes.wave_decay == 0.5 and sizes.wave_aim == "virtual"
    assert any("wave inputs' decay 0.5" in line for line in sizes_said(sizes, training=True))
    train_fast("SpinBot", tmp_path, steps=40, envs=2, updates_per_step=0.0, max_turns=20)
    meta = read_meta(latest_path(tmp_path))
    assert meta is not None and meta.network_sizes["wave_decay"] == 0.5
    assert meta.network_sizes["wave_aim"] == "virtual"
    monkeypatch.delenv("SACBOT_WAVE_DECAY")  # resumed: the networks' own decay and aim, as they were built
    monkeypatch.delenv("SACBOT_WAVE_AIM")
    resumed = network_sizes_for(load_sacbot_settings(), meta)
    assert (resumed.wave_decay, resumed.wave_aim) == (0.5, "virtual")


def _wave_confidences(decay: float) -> np.ndarray:
    """The wave inputs' confidence on each of 600 turns against SpinBot, firing whenever the gun is cool."""
    env = TankRoyaleEnv(
        "SpinBot",
        radar_mode="lock",
        sizes=NetworkSizes(wave_inputs=True, wave_decay=decay),
        rounds_per_game=3,
    )
    obs, _ = env.reset(seed=4)
    assert env.memory.wave_decay == decay
    seen = []
    for _ in range(600):
        obs, _, terminated, truncated, _ = env.step(np.array([0.0, 0.0, 0.0, 0.7], np.float32))
        seen.append(obs[17])
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()
    return np.array(seen)


def test_the_environment_records_the_waves_with_the_networks_decay() -> None:
    short, long = _wave_confidences(0.5), _wave_confidences(WAVE_DECAY)
    assert short.max() > 0.0
    # At 0.5 the record never weighs more than 1 / (1 - 0.5) = 2 waves: confidence 2 / (2 + 5) at most.
    assert short.max() <= 2.0 / 7.0 + 1e-6 < long.max()


def test_the_environments_read_the_record_with_the_networks_aim() -> None:
    """Every environment train-fast steps (`VecTankRoyaleEnv`) builds its memory with the networks' aim:
    against SpinBot, which circles, the aim entry moves off the peak once the linear aim has hit more."""
    envs = VecTankRoyaleEnv(
        2, "SpinBot", radar_mode="lock", sizes=NetworkSizes(wave_inputs=True, wave_aim="virtual")
    )
    assert [env.memory.wave_aim for env in envs.envs] == ["virtual", "virtual"]
    plain = TankRoyaleEnv("SpinBot", radar_mode="lock", sizes=NetworkSizes(wave_inputs=True))
    assert plain.memory.wave_aim == "peak"
    envs.reset(seed=4)
    aims = []
    for _ in range(600):
        obs, *_ = envs.step(np.tile(np.array([0.0, 0.0, 0.0, 0.7], np.float32), (2, 1)))
        aims.append(obs[:, 28].copy())
    hits = envs.envs[0].memory.gun_hits
    envs.close()
    plain.close()
    assert hits[0] > hits[1] and np.unique(np.round(np.array(aims), 3)).size > 9  # not the 9 bin centres
