"""`sacbot play` with SACBOT_TENSORBOARD on the embedded arena: the trainer thread's round-end saves also
write the round and train-pass lines as TensorBoard scalars (CleanRL's tags), the JSONL files unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sacbot.arena.battle import run_battle
from sacbot.checkpoint import read_meta
from sacbot.engine import game_setup_for
from sacbot.tensorboard import read_scalars

from .runtime_support import BOTS, OPPONENT, SMALL


def test_play_writes_episodic_returns_win_rates_and_losses(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    use_env: Callable[[pytest.MonkeyPatch, dict[str, str]], None],
    wait_for: Callable[..., None],
    bot_log: Callable[[Path], str],
) -> None:
    weights, board = tmp_path / "weights", tmp_path / "tb"
    use_env(
        monkeypatch,
        {
            **SMALL,
            "SACBOT_WEIGHTS_DIR": str(weights),
            "SACBOT_OPPONENT": OPPONENT.name,
            "SACBOT_TENSORBOARD": str(board),
        },
    )
    setup = game_setup_for("1v1", number_of_rounds=3)
    run_battle([BOTS / "SacBot", OPPONENT], setup, log_dir=tmp_path / "logs")
    wait_for(lambda: "sacbot play: stopped (" in bot_log(tmp_path / "logs"), "a clean exit")
    log = bot_log(tmp_path / "logs")
    assert f"TensorBoard scalars in {board}" in log and "Traceback" not in log

    got = read_scalars(board)
    rounds = [json.loads(line) for line in (weights / "rounds.jsonl").read_text().splitlines()]
    metrics = [json.loads(line) for line in (weights / "training_metrics.jsonl").read_text().splitlines()]
    assert len(rounds) == 3
    assert [v for _, v in got["charts/episodic_return"]] == pytest.approx([r["reward_sum"] for r in rounds])
    assert [v for _, v in got["charts/episodic_length"]] == [r["turns"] for r in rounds]
    # The x axis is the learner's environment steps at each round end, the ones its metrics line records.
    steps = [s for s, _ in got["charts/episodic_return"]]
    assert steps == [m["env_steps"] for m in metrics]
    meta = read_meta(weights / "latest.zip")
    assert meta is not None and steps[-1] == meta.env_steps
    won = [r["outcome"] == "won" for r in rounds]
    expected = [sum(won[: k + 1]) / (k + 1) for k in range(3)]
    assert [v for _, v in got[f"charts/win_rate/{OPPONENT.name}"]] == pytest.approx(expected)
    trained = [m for m in metrics if m["critic_loss"] is not None]
    assert trained, "the trainer made no update in three rounds"
    assert [v for _, v in got["losses/qf_loss"]] == pytest.approx([m["critic_loss"] / 2 for m in trained])
    assert [v for _, v in got["losses/qf1_loss"]] == pytest.approx([m["qf1_loss"] for m in trained])
    assert [v for _, v in got["losses/alpha"]] == pytest.approx([m["alpha"] for m in trained])
    assert [s for s, _ in got["losses/actor_loss"]] == [m["env_steps"] for m in trained]
    assert got["charts/SPS"]
