"""The shipped actor (`sacbot/data/sacbot-actor.zip`): an actor-only export of the past-teacher
campaign's checkpoint with its provenance, the start of `sacbot play` when the weights folder holds no
checkpoint of its own (SACBOT_SHIPPED=0: a fresh init), and the default of `sacbot eval`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.arena.battle import run_battle
from sacbot.arena.controller import GameResult
from sacbot.checkpoint import TEMPERATURE, CheckpointMeta, load_checkpoint, read_meta, save_checkpoint
from sacbot.cli.main import app
from sacbot.engine import game_setup_for
from sacbot.errors import UserError
from sacbot.export.policy import sizes_from_dict
from sacbot.runtime.startup import (
    ANCHOR,
    CRITIC_WARMUP,
    SHIPPED_ACTOR,
    SHIPPED_RECIPE,
    actor_specs,
    anchor_for,
    choose_start,
    critic_warmup_for,
    full_start_arrays,
    network_sizes_for,
    shipped_recipe,
    start_meta,
)
from sacbot.settings import SacbotSettings, load_sacbot_settings

from .runtime_support import BOTS, SMALL

ADVANCED = {"Teacher", "Rammer", "Gunner", "Orbiter", "StopGo", "Surfer"}
CLASSICS = {"Target", "Fire", "SpinBot", "MyFirstBot", "Crazy", "Corners", "Walls", "TrackFire", "VelociBot"}


@pytest.fixture(scope="module")
def specs() -> dict[str, tuple[tuple[int, ...], str]]:
    """The array specs of networks of the default sizes."""
    return SacTrainer(TrainerConfig(device="cpu", replay_capacity=64)).array_specs()


def shipped_trainer() -> SacTrainer:
    """A trainer of the shipped actor's sizes (its meta's network_sizes: the angle inputs)."""
    meta = read_meta(SHIPPED_ACTOR)
    assert meta is not None
    sizes = sizes_from_dict(meta.network_sizes)
    return SacTrainer(TrainerConfig(sizes=sizes, device="cpu", replay_capacity=64))


def test_the_shipped_actor_verifies_and_carries_its_provenance() -> None:
    assert SHIPPED_ACTOR.is_file() and SHIPPED_ACTOR.stat().st_size < 1_000_000
    result = CliRunner().invoke(app, ["checkpoint", "verify", str(SHIPPED_ACTOR)])
    assert result.exit_code == 0 and "every actor network shape" in result.output, result.output
    arrays, meta = load_checkpoint(SHIPPED_ACTOR)
    assert meta is not None and meta.contents == "actor"
    assert {name for name in arrays if not name.startswith("actor.")} == {TEMPERATURE}
    # The temperature it learnt with (the entropy target -8 under the bound -2 took it to ~1e-4, the wave
    # gun's fine-tunes to ~4e-3): a training start keeps it; at the trainer's default 0.2 the entropy term
    # pulled the actor off its play at once.
    assert float(np.exp(arrays[TEMPERATURE])) < 0.05
    assert meta.extra["radar_mode"] == "lock" and meta.extra["kickstart"] == 50.0
    assert meta.extra["kickstart_filter"] is True and meta.network_sizes["angle_inputs"] is True
    # Fine-tuned with the surfing teacher, then its gun with the wave gun teacher.
    assert meta.extra["teacher_surf"] is True
    assert meta.extra["teacher_gun"] == "wave" and meta.extra["kickstart_movement"] == 0.0  # gun's teacher
    assert meta.extra["anchor_movement"] == 10.0  # the anchor held its movement ten times as hard as its gun
    assert meta.network_sizes["wave_decay"] == 0.5  # a wave record that halves at each new wave
    assert meta.network_sizes["log_std_max"] == -2.0  # the campaign's bound on the policy's spread
    provenance = meta.extra["provenance"]
    assert provenance["campaign"] == "past-teacher"
    assert re.fullmatch(r"[0-9a-f]{40}", provenance["commit"])
    for table in (provenance["eval"], provenance["eval_speed"]):  # the mean, then the speed drawn
        assert set(table) == CLASSICS | {"RamFire"} | ADVANCED
        assert all(row["rounds"] == 100 for row in table.values())
        assert all(88 <= table[name]["wins"] <= 100 for name in CLASSICS | {"RamFire"})
    assert provenance["eval"]["Teacher"]["wins"] >= 60  # its mean beats the teacher it started from


def test_export_adds_provenance(tmp_path: Path) -> None:
    source = tmp_path / "full.zip"
    sac = SacTrainer(TrainerConfig(device="cpu", replay_capacity=64))
    save_checkpoint(source, sac.state_arrays(), CheckpointMeta(network_sizes=sac.network_sizes()))
    record = tmp_path / "provenance.json"
    record.write_text(json.dumps({"campaign": "c", "eval": {"SpinBot": {"rounds": 3, "wins": 3}}}))
    out = tmp_path / "actor.zip"
    runner = CliRunner()
    args = ["checkpoint", "export", str(source), str(out), "--actor-only", "--provenance", str(record)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    meta = read_meta(out)
    assert meta is not None and meta.contents == "actor"
    assert meta.extra["provenance"]["eval"]["SpinBot"]["wins"] == 3
    arrays, _ = load_checkpoint(out)
    assert set(arrays) == set(sac.actor_arrays()) | {TEMPERATURE}
    assert arrays[TEMPERATURE] == sac.state_arrays()[TEMPERATURE]
    verified = runner.invoke(app, ["checkpoint", "verify", str(out)])
    assert verified.exit_code == 0 and "every actor network shape" in verified.output, verified.output
    record.write_text("[1, 2]")
    result = runner.invoke(app, [*args, "--force"])
    assert isinstance(result.exception, UserError) and result.exception.exit_code == 2
    assert "JSON object" in str(result.exception)


def test_slot_order_ends_with_the_shipped_actor_then_fresh(tmp_path: Path) -> None:
    sac = shipped_trainer()
    specs = sac.array_specs()
    empty = tmp_path / "weights"
    start = choose_start(None, empty, "SpinBot", specs, actor_only=True)
    assert start.shipped and start.arrays is not None
    assert set(start.arrays) == set(actor_specs(specs)) | {TEMPERATURE}
    assert start.source.startswith("start: shipped actor sacbot-actor.zip (campaign past-teacher, commit ")
    fresh = choose_start(None, empty, "SpinBot", specs, actor_only=True, shipped=None)
    assert fresh.arrays is None and not fresh.shipped and "SACBOT_SHIPPED=0" in fresh.source
    # A training start: the actor's weights, fresh critics and counters, the teacher's term it learnt with.
    training = choose_start(None, empty, None, specs, actor_only=False)
    assert training.arrays is not None and "fresh critics" in training.source
    sac.load_state_arrays(full_start_arrays(training.arrays, sac.state_arrays()))
    assert all((v == training.arrays[k]).all() for k, v in sac.actor_arrays().items())
    assert sac.alpha == pytest.approx(float(np.exp(training.arrays[TEMPERATURE])))  # its own, not 0.2
    assert (
        sac.updates == 0 and shipped_recipe(training, SacbotSettings.model_construct())["kickstart"] == 50.0
    )
    assert shipped_recipe(fresh, SacbotSettings.model_construct()) == {}
    # Its fresh critics warm up alone first and the anchor holds the actor; a fresh init has neither; the
    # settings decide when set.
    assert critic_warmup_for(None, training) == CRITIC_WARMUP > 0 and anchor_for(None, training) == ANCHOR > 0
    assert critic_warmup_for(None, fresh) == 0 and critic_warmup_for(0, training) == 0
    assert anchor_for(None, fresh) == 0.0 and anchor_for(0.0, training) == 0.0
    # A checkpoint of the folder's own comes first, its critics trained with its actor.
    save_checkpoint(empty / "best.zip", sac.state_arrays(), CheckpointMeta(network_sizes=sac.network_sizes()))
    own = choose_start(None, empty, None, specs, actor_only=False)
    assert not own.shipped and "loaded slot best" in own.source
    assert critic_warmup_for(None, own) == 0 and critic_warmup_for(500, own) == 500
    assert anchor_for(None, own) == 0.0 and anchor_for(5.0, own) == 5.0
    # An actor archive named by SACBOT_CHECKPOINT trains on with fresh critics too.
    actor_meta = CheckpointMeta(network_sizes=sac.network_sizes(), contents="actor")
    save_checkpoint(tmp_path / "actor.zip", sac.actor_arrays(), actor_meta)
    named = choose_start(tmp_path / "actor.zip", empty, None, specs, actor_only=False)
    assert critic_warmup_for(None, named) == CRITIC_WARMUP and anchor_for(None, named) == ANCHOR


def test_the_networks_are_sized_from_the_shipped_actor_when_no_slot_exists(tmp_path: Path) -> None:
    """`play` reads the start's meta before it builds the networks: with no slot of its own, the shipped
    actor's, so an actor built with the angle inputs is played with them."""
    shipped = tmp_path / "shipped.zip"
    sac = SacTrainer(TrainerConfig(sizes=NetworkSizes(angle_inputs=True), device="cpu", replay_capacity=64))
    actor_meta = CheckpointMeta(network_sizes=sac.network_sizes(), contents="actor")
    save_checkpoint(shipped, sac.actor_arrays(), actor_meta)
    empty = tmp_path / "weights"
    meta = start_meta(None, empty, "SpinBot", shipped)
    assert meta is not None and meta.network_sizes["angle_inputs"] is True
    assert start_meta(None, empty, "SpinBot", None) is None  # SACBOT_SHIPPED=0
    plain = SacTrainer(TrainerConfig(device="cpu", replay_capacity=64))
    plain_meta = CheckpointMeta(network_sizes=plain.network_sizes())
    save_checkpoint(empty / "best.zip", plain.state_arrays(), plain_meta)
    own = start_meta(None, empty, "SpinBot", shipped)  # a slot of the folder's own comes first
    assert own is not None and own.network_sizes["angle_inputs"] is False


def test_the_gun_offset_is_the_checkpoints_and_a_contrary_setting_is_one_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    offset = CheckpointMeta(network_sizes=NetworkSizes(gun_offset=True).as_dict())
    turn = CheckpointMeta(network_sizes=NetworkSizes().as_dict())
    older = CheckpointMeta(network_sizes={"hidden": 128})  # written before the setting: a turn
    monkeypatch.delenv("SACBOT_GUN_OFFSET", raising=False)
    assert network_sizes_for(load_sacbot_settings(), offset).gun_offset is True
    assert network_sizes_for(load_sacbot_settings(), older).gun_offset is False
    assert network_sizes_for(load_sacbot_settings(), None).gun_offset is False
    monkeypatch.setenv("SACBOT_GUN_OFFSET", "1")
    assert network_sizes_for(load_sacbot_settings(), None).gun_offset is True  # a fresh start
    assert network_sizes_for(load_sacbot_settings(), offset).gun_offset is True
    with pytest.raises(UserError, match="SACBOT_GUN_OFFSET=1, but the checkpoint .* without the gun offset"):
        network_sizes_for(load_sacbot_settings(), turn)
    monkeypatch.setenv("SACBOT_GUN_OFFSET", "0")
    with pytest.raises(UserError, match="SACBOT_GUN_OFFSET=0, but the checkpoint .* with the gun offset"):
        network_sizes_for(load_sacbot_settings(), offset)


def test_the_policys_std_bound_is_the_settings_else_the_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SACBOT_LOG_STD_MAX", raising=False)
    bounded = CheckpointMeta(network_sizes=NetworkSizes(log_std_max=-1.0).as_dict())
    assert network_sizes_for(load_sacbot_settings(), bounded).log_std_max == -1.0
    assert network_sizes_for(load_sacbot_settings(), None).log_std_max == NetworkSizes().log_std_max
    monkeypatch.setenv("SACBOT_LOG_STD_MAX", "0.5")
    assert network_sizes_for(load_sacbot_settings(), bounded).log_std_max == 0.5
    monkeypatch.setenv("SACBOT_LOG_STD_MAX", "3")  # above the networks' own bound
    with pytest.raises(UserError, match="SACBOT_LOG_STD_MAX"):
        load_sacbot_settings()


def test_a_training_start_takes_the_shipped_actors_recipe(
    tmp_path: Path, specs: dict[str, tuple[tuple[int, ...], str]]
) -> None:
    """The teacher's term and the teacher as the shipped actor learnt them (its meta's extra) where the
    settings leave them unset; a value that does not validate, a setting that is set, and a fresh init keep
    the settings'."""
    shipped = tmp_path / "shipped.zip"
    sac = SacTrainer(TrainerConfig(device="cpu", replay_capacity=64))
    extra = {
        "kickstart": 50.0,
        "kickstart_filter": True,
        "kickstart_movement": -1.0,  # below the setting's bound: skipped
        "teacher_surf": True,
        "teacher_gun": "wave",
        "self_imitation": 3.0,  # not a setting the shipped actor hands on
    }
    meta = CheckpointMeta(network_sizes=sac.network_sizes(), extra=extra)
    save_checkpoint(shipped, sac.actor_arrays(), meta)
    empty = tmp_path / "weights"
    start = choose_start(None, empty, None, specs, actor_only=False, shipped=shipped)
    assert start.shipped
    taken = {"kickstart": 50.0, "kickstart_filter": True, "teacher_surf": True, "teacher_gun": "wave"}
    unset = SacbotSettings.model_construct()  # the defaults, none set
    assert set(taken) < set(SHIPPED_RECIPE) and shipped_recipe(start, unset) == taken
    linear = SacbotSettings.model_construct(teacher_gun="linear")  # set, even to the default: the setting's
    assert shipped_recipe(start, linear) == {k: v for k, v in taken.items() if k != "teacher_gun"}
    fresh = choose_start(None, empty, None, specs, actor_only=False, shipped=None)
    assert shipped_recipe(fresh, unset) == {}
    # An actor archive written before it kept the temperature (the actor's arrays alone) still starts.
    assert start.arrays is not None and TEMPERATURE not in start.arrays


def _first_places(result: GameResult, name: str) -> int:
    return next(r.first_places for r in result.results if r.name == name)


@pytest.fixture
def shipped_game(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
    bot_log: Callable[[Path], str],
) -> Callable[[str, dict[str, str]], tuple[GameResult, str]]:
    """`shipped_game(opponent, settings)`: three rounds of `bots/SacBot` from an empty weights folder
    (`tmp_path / "weights"`: the shipped actor) with `settings` against `bots/<opponent>`; the result and the
    bot's log once it stopped."""

    def play(opponent: str, settings: dict[str, str]) -> tuple[GameResult, str]:
        env = {k: v for k, v in SMALL.items() if k != "SACBOT_SHIPPED"}
        use_env(monkeypatch, {**env, "SACBOT_WEIGHTS_DIR": str(tmp_path / "weights"), **settings})
        setup = game_setup_for("1v1", number_of_rounds=3)
        result = run_battle([BOTS / "SacBot", BOTS / opponent], setup, log_dir=tmp_path / "l")
        log_of = lambda: bot_log(tmp_path / "l")  # noqa: E731
        wait_for(lambda: "sacbot play: stopped (" in log_of(), "a clean exit", detail=log_of)
        return result, log_of()

    return play


def test_play_starts_from_the_shipped_actor_and_wins(
    shipped_game: Callable[[str, dict[str, str]], tuple[GameResult, str]],
) -> None:
    """Eval mode, an empty weights folder, Walls: the shipped actor won 100 of 100 such rounds."""
    result, log = shipped_game("Walls", {"SACBOT_EVAL_MODE": "1"})
    assert "shipped actor sacbot-actor.zip (campaign past-teacher, commit" in log
    assert "radar lock (the checkpoint's)" in log
    assert _first_places(result, "SacBot") >= 2, log


def test_a_training_start_from_the_shipped_actor_keeps_its_temperature_warms_up_then_anchors(
    tmp_path: Path, shipped_game: Callable[[str, dict[str, str]], tuple[GameResult, str]]
) -> None:
    """Training play from an empty weights folder: the shipped actor at its own temperature (not 0.2), its
    fresh critics stepped alone first, then the anchor term acting (a short warm-up so a 3-round game gets
    past it: the first actor step's anchor loss is 0, the actor not yet moved, so the test looks past it);
    the anchor's movement entries at half weight (SACBOT_ANCHOR_MOVEMENT), said in the log."""
    _, log = shipped_game("SpinBot", {"SACBOT_CRITIC_WARMUP": "2", "SACBOT_ANCHOR_MOVEMENT": "0.5"})
    assert "shipped actor sacbot-actor.zip" in log and "fresh critics" in log
    assert "critics warm up: the first 2 updates step the critics alone" in log
    held = "anchor 50: the actor is held near the one this game started from"
    assert f"{held} (its movement entries at 0.5 of the gun's)" in log
    recipe = "kickstart 50, kickstart_filter True, kickstart_movement 0, teacher_surf True, teacher_gun wave"
    assert f"the shipped actor's recipe: {recipe} (each SACBOT_<NAME> overrides)" in log
    taught = (
        "kickstart 50: the actor's loss also pulls toward the teacher, its movement entries at 0 of the gun's"
    )
    assert f"{taught}, only where the critics rate the teacher's action higher" in log
    assert "surfing teacher: its speed goes where the enemy's bullets have hit us least" in log
    assert "wave gun teacher: it aims at the wave record's likeliest guess factor" in log
    metrics = (tmp_path / "weights" / "training_metrics.jsonl").read_text().splitlines()
    trained = [m for m in map(json.loads, metrics) if m.get("updates")]
    assert trained and all(m["alpha"] < 0.05 for m in trained)  # the shipped actor's ~4e-3, not 0.2
    assert trained[-1]["updates"] > 3, trained[-1]  # two actor steps past the warm-up
    assert all(m["anchor_loss"] > 0.0 for m in trained if m["updates"] > 3)  # anchored once the actor moved


def test_the_opt_out_starts_fresh(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
    bot_log: Callable[[Path], str],
) -> None:
    use_env(monkeypatch, {**SMALL, "SACBOT_WEIGHTS_DIR": str(tmp_path / "w"), "SACBOT_EVAL_MODE": "1"})
    run_battle(
        [BOTS / "SacBot", BOTS / "TrackFire"],
        game_setup_for("1v1", number_of_rounds=1),
        log_dir=tmp_path / "l",
    )
    wait_for(lambda: "sacbot play: stopped (" in bot_log(tmp_path / "l"), "a clean exit")
    log = bot_log(tmp_path / "l")
    assert "fresh init" in log and "SACBOT_SHIPPED=0" in log and "shipped actor" not in log


def test_arena_run_shows_sacbot_winning(tmp_path: Path) -> None:
    """The README's first battle: `sacbot arena run bots/SacBot bots/SpinBot` with an empty weights folder
    (a training `play`: the shipped actor, fresh critics, its teacher's term, actions sampled). It wins about
    0.8 of these rounds (33 of 40 in eight runs of 5), so 10 rounds with at least 5 won fail by chance about
    once in 300 runs, where 3 of 5 failed once in 25."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SACBOT_", "BOT_", "SERVER_"))}
    env["SACBOT_WEIGHTS_DIR"] = str(tmp_path / "weights")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sacbot",
            "arena",
            "run",
            "bots/SacBot",
            "bots/SpinBot",
            "--rounds",
            "10",
            "--json",
        ],
        cwd=BOTS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert results[0]["name"] == "SacBot" and results[0]["firstPlaces"] >= 5, results
