"""`sacbot train-fast` plays with `sacbot play`'s radar mode: SACBOT_RADAR_MODE, or the settings given."""

from __future__ import annotations

from pathlib import Path

import pytest

from sacbot.checkpoint import latest_path, load_checkpoint
from sacbot.env.train import train_fast
from sacbot.errors import UserError
from sacbot.settings import load_sacbot_settings


def _radar_of(out: Path) -> object:
    _, meta = load_checkpoint(latest_path(out))
    assert meta is not None
    return meta.extra["radar_mode"]


def test_train_fast_follows_the_radar_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SACBOT_RADAR_MODE", "lock")
    train_fast("Target", tmp_path / "a", steps=20, envs=2, updates_per_step=0.0, max_turns=20)
    assert _radar_of(tmp_path / "a") == "lock"
    monkeypatch.delenv("SACBOT_RADAR_MODE")
    train_fast("Target", tmp_path / "b", steps=20, envs=2, updates_per_step=0.0, max_turns=20)
    assert _radar_of(tmp_path / "b") == "spin"  # the default, as in play
    lock = load_sacbot_settings().model_copy(update={"radar_mode": "lock"})
    train_fast("Target", tmp_path / "c", steps=20, envs=2, updates_per_step=0.0, max_turns=20, settings=lock)
    assert _radar_of(tmp_path / "c") == "lock"


def test_train_fast_refuses_an_unknown_radar_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SACBOT_RADAR_MODE", "wobble")
    with pytest.raises(UserError, match="RADAR_MODE"):
        train_fast("Target", tmp_path, steps=20, envs=2)
    assert not (tmp_path / "latest.zip").exists()
