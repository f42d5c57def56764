"""The training recipe: the settings every learner shell hands its trainer as they are
(`sacbot.runtime.startup.trainer_config_for`), and what a pretraining run records of them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import latest_path, read_meta
from sacbot.env.train import train_fast
from sacbot.runtime.startup import RECIPE_SETTINGS, network_sizes_for, trainer_config_for, warmup_said
from sacbot.settings import SacbotSettings, load_sacbot_settings

# What each shell chooses itself: where it runs, its seed, the critics' warm-up and the anchor (play's hang on
# its start), the entropy target (the checkpoint's when unset), and play's own batch size and fresh share.
CHOSEN_BY_THE_SHELL = {
    "device",
    "seed",
    "critic_warmup",
    "anchor",
    "target_entropy",
    "batch_size",
    "fresh_fraction",
}


def test_the_recipe_is_every_setting_the_trainer_shares_but_those_a_shell_chooses() -> None:
    shared = {f.name for f in dataclasses.fields(TrainerConfig)} & set(SacbotSettings.model_fields)
    assert set(RECIPE_SETTINGS) == shared - CHOSEN_BY_THE_SHELL
    assert len(RECIPE_SETTINGS) == len(set(RECIPE_SETTINGS))


RECIPE_ENV = {
    "SACBOT_THREAT_INPUTS": "1",
    "SACBOT_KICKSTART": "5",
    "SACBOT_KICKSTART_MOVEMENT": "0.5",
    "SACBOT_TEACHER_SURF": "1",
    "SACBOT_N_STEP": "3",
    "SACBOT_HINDSIGHT_AIM": "7",
    "SACBOT_ANCHOR_MOVEMENT": "0",
}


def test_the_settings_reach_the_trainer_and_train_fasts_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in RECIPE_ENV.items():
        monkeypatch.setenv(name, value)
    settings = load_sacbot_settings()
    config = trainer_config_for(settings, network_sizes_for(settings, None), device="cpu", n_step=2)
    assert (config.kickstart, config.kickstart_movement, config.teacher_surf) == (5.0, 0.5, True)
    assert (config.hindsight_aim, config.anchor_movement) == (7.0, 0.0)
    assert config.n_step == 2  # what the shell chose wins over the setting

    train_fast("Target", tmp_path, steps=20, envs=2, updates_per_step=0.0, max_turns=20)
    meta = read_meta(latest_path(tmp_path))
    assert meta is not None
    extra = meta.extra
    assert {name: extra[name] for name in RECIPE_SETTINGS} == {
        name: getattr(trainer_config_for(settings, config.sizes), name) for name in RECIPE_SETTINGS
    }
    assert (extra["kickstart"], extra["teacher_surf"], extra["n_step"]) == (5.0, True, 3)
    assert extra["threat_inputs"] is True and extra["opponents"] == ["Target"]


def test_the_warm_up_line_counts_from_where_the_learner_stands() -> None:
    assert warmup_said(2000, 0) == "critics warm up: the first 2000 updates step the critics alone"
    resumed = "critics warm up: the updates before update 85832 (the next 2000) step the critics alone"
    assert warmup_said(85_832, 83_832) == resumed
    assert warmup_said(2000, 2000) is None and warmup_said(2000, 90_000) is None and warmup_said(0, 0) is None
