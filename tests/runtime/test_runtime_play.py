"""`sacbot play` for real: booted from bots/SacBot by the arena's booter, over WebSocket, against an opponent.

Small settings (warm-up 1 round, batch 8, short games) keep these fast; every file check reads the real files.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot.agent.sizes import NetworkSizes
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.arena.battle import run_battle
from sacbot.arena.server import EmbeddedArena
from sacbot.checkpoint import CheckpointMeta, load_checkpoint, read_meta, save_checkpoint
from sacbot.checkpoint.replay_file import load_replay
from sacbot.engine import game_setup_for
from sacbot.protocol import RoundEndedEventForObserver
from sacbot.rundir import REPLAY

from .runtime_support import BOTS, OPPONENT, SMALL


def rounds_saved(weights: Path) -> int:
    try:
        return int(json.loads((weights / "round_counter.json").read_text())["rounds"])
    except (OSError, ValueError, KeyError):
        return 0


def test_full_game_trains_and_saves_every_round(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
    bot_log: Callable[[Path], str],
) -> None:
    weights = tmp_path / "weights"
    use_env(
        monkeypatch,
        {
            **SMALL,
            "SACBOT_WEIGHTS_DIR": str(weights),
            "SACBOT_OPPONENT": OPPONENT.name,
            "SACBOT_BEST_WINDOW": "2",
            "SACBOT_RADAR_MODE": "lock",
            "SACBOT_KICKSTART": "2.0",  # the teacher's term joins the actor loss (sacbot.agent.teacher)
        },
    )
    seen: list[int] = []

    def on_event(msg: Any) -> None:
        if isinstance(msg, RoundEndedEventForObserver):
            k = int(msg.round_number)
            # The bot saves this round off its realtime thread: once its counter says so, latest must load.
            wait_for(lambda: rounds_saved(weights) >= k, f"round {k} saved")
            _, meta = load_checkpoint(weights / "latest.zip")
            assert meta is not None and meta.extra["round_total"] >= k
            seen.append(k)

    setup = game_setup_for("1v1", number_of_rounds=3)
    result = run_battle([BOTS / "SacBot", OPPONENT], setup, log_dir=tmp_path / "logs", on_event=on_event)
    assert result.number_of_rounds == 3 and seen == [1, 2, 3]
    log = bot_log(tmp_path / "logs")
    assert "fresh init" in log and log.count("saved") >= 3 and "Traceback" not in log
    assert "radar lock (SACBOT_RADAR_MODE)" in log
    wait_for(lambda: "sacbot play: stopped (" in bot_log(tmp_path / "logs"), "a clean exit")
    rounds = [json.loads(line) for line in (weights / "rounds.jsonl").read_text().splitlines()]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    assert all(r["turns"] > 0 and r["tick_to_intent_p99_ms"] >= r["tick_to_intent_p50_ms"] for r in rounds)
    metrics = [json.loads(line) for line in (weights / "training_metrics.jsonl").read_text().splitlines()]
    assert [m["epoch"] for m in metrics] == [1, 2, 3]
    assert any((m.get("kickstart_loss") or 0.0) > 0.0 for m in metrics)
    _, meta = load_checkpoint(weights / "latest.zip")
    assert meta is not None and meta.updates > 0 and meta.env_steps == sum(r["turns"] - 1 for r in rounds)
    assert (meta.extra["radar_mode"], meta.extra["kickstart"]) == ("lock", 2.0)  # later runs follow it
    best = read_meta(weights / "opponents" / f"{OPPONENT.name}.zip")
    assert best is not None and best.score_kind == "play_score_share_last_2"
    assert not (weights / "best.zip").exists()


def test_a_bot_that_dies_early_still_saves(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
) -> None:
    weights = tmp_path / "weights"
    use_env(monkeypatch, {**SMALL, "SACBOT_WARMUP_ROUNDS": "9", "SACBOT_WEIGHTS_DIR": str(weights)})
    round_turns: list[int] = []

    def on_event(msg: Any) -> None:
        if isinstance(msg, RoundEndedEventForObserver):
            round_turns.append(int(msg.turn_number))

    # SacBot dies early only when two others outlive it. Against TrackFire and SpinBot alone it did in 18 of
    # 24 rounds, so a 3-round game missed ~1.6 % of the time (once in CI). With Walls as a third armed
    # opponent it did in 77 of 78 rounds: all three rounds miss with a chance of a few in a million.
    setup = game_setup_for("custom", number_of_rounds=3)
    run_battle(
        [BOTS / "SacBot", OPPONENT, BOTS / "SpinBot", BOTS / "Walls"],
        setup,
        log_dir=tmp_path / "logs",
        on_event=on_event,
    )
    wait_for(lambda: rounds_saved(weights) == 3, "every round saved")
    rounds = [json.loads(line) for line in (weights / "rounds.jsonl").read_text().splitlines()]
    assert [r["round"] for r in rounds] == [1, 2, 3]
    died_early = [r for r, total in zip(rounds, round_turns, strict=True) if r["turns"] < total]
    assert died_early, "SacBot outlived three armed opponents in every round"
    assert all(r["outcome"] == "lost" for r in died_early)
    load_checkpoint(weights / "latest.zip")


def test_the_replay_is_kept_at_game_end_and_loaded_by_the_next_game(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
    bot_log: Callable[[Path], str],
) -> None:
    """A campaign restarts `sacbot play` every chunk: the next game trains on the rounds of the last ones."""
    weights = tmp_path / "weights"
    use_env(monkeypatch, {**SMALL, "SACBOT_WEIGHTS_DIR": str(weights), "SACBOT_REPLAY_KEEP": "100000"})
    setup = game_setup_for("1v1", number_of_rounds=2)
    for game in (1, 2):
        logs = tmp_path / f"logs{game}"
        run_battle([BOTS / "SacBot", OPPONENT], setup, log_dir=logs)
        wait_for(lambda logs=logs: "sacbot play: stopped (" in bot_log(logs), "a clean exit")
        sizes = NetworkSizes()
        kept = load_replay(weights / REPLAY, sizes.state_dim, sizes.action_dim, sizes.hidden)
        assert len(kept["lengths"]) == 2 * game
        rounds = [json.loads(line) for line in (weights / "rounds.jsonl").read_text().splitlines()]
        assert kept["lengths"].tolist() == [r["turns"] - 1 for r in rounds]  # every step, whole rounds
    assert "replay starts empty (no replay.npz yet)" in bot_log(tmp_path / "logs1")
    assert "replay starts with 2 kept rounds" in bot_log(tmp_path / "logs2")


def tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def save_best(weights: Path, config: TrainerConfig) -> None:
    """A fresh trainer of this config as the weights folder's best slot."""
    from sacbot.agent.trainer import SacTrainer

    sac = SacTrainer(config)
    save_checkpoint(
        weights / "best.zip", sac.state_arrays(), CheckpointMeta(network_sizes=sac.network_sizes())
    )


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("mean", "deterministic actions (the policy's mean)"),
        ("sampled", "actions sampled from the policy"),
        ("speed", "the policy's mean, its target speed sampled"),
    ],
)
def test_eval_mode_writes_nothing_and_changes_no_weight(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
    bot_log: Callable[[Path], str],
    mode: str,
    said: str,
) -> None:
    weights = tmp_path / "weights"
    save_best(weights, TrainerConfig(seed=11, device="cpu"))
    before = tree_digest(weights)
    env = {**SMALL, "SACBOT_WEIGHTS_DIR": str(weights), "SACBOT_EVAL_MODE": "1", "SACBOT_EVAL_ACTIONS": mode}
    use_env(monkeypatch, env)
    run_battle(
        [BOTS / "SacBot", OPPONENT],
        game_setup_for("1v1", number_of_rounds=1),
        log_dir=tmp_path / "logs",
    )
    wait_for(lambda: "sacbot play: stopped (" in bot_log(tmp_path / "logs"), "a clean exit")
    log = bot_log(tmp_path / "logs")
    assert f"eval mode: {said}, no training" in log and "loaded slot best" in log
    assert tree_digest(weights) == before


def test_a_checkpoint_with_extra_inputs_plays_and_trains_on_with_them(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
    bot_log: Callable[[Path], str],
) -> None:
    """The networks' input width comes from the checkpoint: no setting needed to play what train-fast made."""
    weights = tmp_path / "weights"
    sizes = NetworkSizes(
        angle_inputs=True,
        energy_inputs=True,
        lead_inputs=True,
        wave_inputs=True,
        threat_inputs=True,
        bullet_inputs=True,
        gun_offset=True,
        log_std_max=-1.0,
    )
    save_best(weights, TrainerConfig(sizes=sizes, seed=3, device="cpu"))
    extra = {
        "SACBOT_BEHAVIOUR_LOG_STD_MIN": "-0.5",
        "SACBOT_SELF_IMITATION": "2",
        "SACBOT_HINDSIGHT_AIM": "5",
        "SACBOT_HINDSIGHT_DISTANCE": "hit",
        "SACBOT_FRESH_FRACTION": "0.5",
    }
    use_env(monkeypatch, {**SMALL, "SACBOT_WEIGHTS_DIR": str(weights), **extra})
    # Three rounds: training starts after the first (the warm-up), so the trainer has two rounds of play for
    # its passes; with two it once made none on a loaded machine.
    run_battle(
        [BOTS / "SacBot", OPPONENT], game_setup_for("1v1", number_of_rounds=3), log_dir=tmp_path / "logs"
    )
    wait_for(lambda: "sacbot play: stopped (" in bot_log(tmp_path / "logs"), "a clean exit")
    log = bot_log(tmp_path / "logs")
    assert "loaded slot best" in log and "angle inputs on" in log and "energy inputs on" in log
    assert "lead inputs on: the networks also read where a linear aim points" in log
    assert "bullet inputs on: the critics also read where our bullets in flight are" in log
    assert "wave inputs on: the networks also read where the enemy was when our past shots reached it" in log
    assert (
        "threat inputs on: the networks also read the enemy's shots in flight and where its bullets hit us"
        in log
    )
    assert "log std bound -1: sampled actions stay nearer the mean" in log
    assert "gun offset on: the actor's gun entry is where the gun points from the enemy's bearing" in log
    assert "behaviour spread: play draws each action entry with log std at least -0.5" in log
    assert "self-imitation 2: toward replay actions the critics rate higher" in log
    assert "fresh rounds: 0.5 of each batch from this run's rounds, not the kept replay" in log
    assert "hindsight aim 5: the gun learns where each shot would have hit" in log
    meta = read_meta(weights / "latest.zip")
    assert meta is not None and meta.updates > 0 and meta.extra["self_imitation"] == 2.0
    assert meta.extra["hindsight_aim"] == 5.0
    passes = [json.loads(line) for line in (weights / "training_metrics.jsonl").read_text().splitlines()]
    assert any((m.get("self_imitation_loss") or 0.0) > 0.0 for m in passes)  # the term acted in play's passes
    # Play's rounds, stored a step at a time, were labelled as they closed: the hindsight term had targets.
    assert any((m.get("hindsight_aim_loss") or 0.0) > 0.0 for m in passes)
    assert meta.network_sizes["angle_inputs"] is True and meta.network_sizes["energy_inputs"] is True
    assert meta.network_sizes["bullet_inputs"] is True and meta.network_sizes["wave_inputs"] is True
    assert meta.network_sizes["threat_inputs"] is True and meta.network_sizes["lead_inputs"] is True
    assert meta.network_sizes["log_std_max"] == -1.0  # the policy's std bound goes on with it too
    assert meta.network_sizes["gun_offset"] is True  # and the gun entry's meaning
    # The kept replay holds each state with the wave and threat inputs and the critics' bullet inputs after
    # it, from real ticks: the bot fired, and its shots' waves reached the enemy; the enemy fired back.
    replay = load_replay(weights / "replay.npz", sizes.stored_dim, sizes.action_dim, sizes.hidden)
    assert replay["obs"].shape[1] == 17 + 12 + 15 + 18
    assert np.count_nonzero(replay["obs"][:, 17]) > 0 and np.count_nonzero(replay["obs"][:, 29]) > 0
    assert np.count_nonzero(replay["obs"][:, 44]) > 0


def sacbot_play(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SACBOT_", "BOT_", "SERVER_"))}
    full.update(env)
    return subprocess.Popen(
        [sys.executable, "-m", "sacbot", "play", *args],
        env=full,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def lobby_names(core: Any) -> list[str]:
    return [c.bot.name for c in core.conns.values() if c.role == "bot" and c.bot is not None]


def test_another_identity_and_sigterm_while_waiting(tmp_path: Path, wait_for: Callable[..., None]) -> None:
    """SACBOT_BOT_JSON renames the bot and moves its default weights folder; SIGTERM in the lobby is clean."""
    twin = tmp_path / "Twin"
    twin.mkdir()
    (twin / "Twin.json").write_text('{"name": "Twin", "version": "2.0", "authors": ["t"]}')
    with EmbeddedArena() as arena:
        proc = sacbot_play({"SERVER_URL": arena.url, "SACBOT_BOT_JSON": str(twin / "Twin.json")})
        try:
            wait_for(lambda: arena.call(lobby_names) == ["Twin"], "the bot in the lobby")
        except AssertionError:
            proc.kill()
            raise
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped (SIGTERM)" in err and "Traceback" not in err
    assert f"weights folder {twin / 'weights'}" in err  # beside the identity JSON, not the current directory
    assert not (twin / "weights" / "latest.zip").exists()  # no round was completed, so nothing to save


def test_bad_checkpoint_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    proc = sacbot_play(
        {
            "SACBOT_CHECKPOINT": str(bad),
            "SACBOT_WEIGHTS_DIR": str(tmp_path / "w"),
            "SERVER_URL": "ws://127.0.0.1:9",
        }
    )
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in err and str(bad) in err and err.strip().count("\n") == 0


def test_bot_script_finds_a_python_with_sacbot() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SACBOT_PYTHON"}
    result = subprocess.run(
        ["bash", str(BOTS / "SacBot" / "SacBot.sh"), "--help"],
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    assert "--eval" in result.stdout


def test_a_trainer_crash_ends_the_process_with_a_clear_error(
    tmp_path: Path, wait_for: Callable[..., None], bot_log: Callable[[Path], str]
) -> None:
    from sacbot.arena.booter import Booter
    from sacbot.arena.controller import play_game

    weights = tmp_path / "weights"
    extra = {**SMALL, "SACBOT_WEIGHTS_DIR": str(weights), "SACBOT_WARMUP_ROUNDS": "9"}
    with EmbeddedArena() as arena, Booter(arena.url, log_dir=tmp_path / "logs", extra_env=extra) as booter:
        sac = booter.boot(BOTS / "SacBot")[0]
        booter.boot(OPPONENT)
        wait_for(lambda: "weights folder" in bot_log(tmp_path / "logs"), "SacBot's start-up line")
        weights.rmdir()
        weights.write_text("in the way")  # the round-end save cannot create its files: the trainer fails
        try:
            play_game(arena.url, game_setup_for("1v1", number_of_rounds=2), ["SacBot", OPPONENT.name])
        except Exception:  # noqa: BLE001 - the game may end either way once SacBot is gone
            pass
        assert sac.process.wait(30) == 3
    log = bot_log(tmp_path / "logs")
    assert "the trainer thread crashed" in log and "sacbot: error:" in log


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SACBOT_TRAINER_DUTY", "0"),
        ("SACBOT_UTD_RATIO", "fast"),
        ("SACBOT_OPPONENT", "../x"),
        ("SACBOT_BEHAVIOUR_LOG_STD_MIN", "3"),
        ("SACBOT_SELF_IMITATION", "-1"),
        ("SACBOT_HINDSIGHT_AIM", "-1"),
        ("SACBOT_HINDSIGHT_STEPS", "0"),
        ("SACBOT_HINDSIGHT_TRIGGER", "-1"),
        ("SACBOT_HINDSIGHT_DISTANCE", "cubic"),
        ("SACBOT_HINDSIGHT_TARGET", "ahead"),
        ("SACBOT_GUN_OFFSET", "sideways"),
        ("SACBOT_FRESH_FRACTION", "1.5"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(tmp_path: Path, variable: str, value: str) -> None:
    proc = sacbot_play({variable: value, "SACBOT_WEIGHTS_DIR": str(tmp_path / "w")})
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and err.strip().count("\n") == 0
    assert not (tmp_path / "w").exists()
