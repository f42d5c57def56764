"""TensorBoard as a second sink: CleanRL's tags from the JSONL dicts, `train-fast --tensorboard`, and one
clear line when the `tensorboard` extra is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sacbot.env.train import train_fast
from sacbot.tensorboard import TensorBoardSink, read_scalars

REPO = Path(__file__).resolve().parents[1]


def test_the_sink_maps_jsonl_lines_to_cleanrl_tags(tmp_path: Path) -> None:
    with TensorBoardSink(tmp_path, start_step=100, window=2) as board:
        # play's line names (own_score / enemy_score) and train-fast's (score / opponent_score)
        board.round_end(
            {
                "reward_sum": 3.5,
                "turns": 40,
                "outcome": "won",
                "opponent": "Walls",
                "own_score": 90.0,
                "enemy_score": 10.0,
            },
            140,
        )
        board.round_end({"reward_sum": -1.0, "turns": 30, "outcome": "truncated", "opponent": "Walls"}, 170)
        board.round_end(
            {
                "reward_sum": -2.0,
                "turns": 50,
                "outcome": "lost",
                "opponent": "Walls",
                "score": 10.0,
                "opponent_score": 90.0,
            },
            220,
        )
        board.round_end(
            {
                "reward_sum": 1.0,
                "turns": 20,
                "outcome": "lost",
                "opponent": "SpinBot",
                "score": 0.0,
                "opponent_score": 0.0,
            },
            240,
        )
        board.round_end({"reward_sum": 0.0, "turns": 10, "outcome": "won", "opponent": "Walls"}, 250)
        board.train_pass(
            {
                "critic_loss": 3.0,
                "actor_loss": -1.5,
                "alpha_loss": 0.25,
                "alpha": 0.1,
                "kickstart_loss": None,
                "epoch": 3,
            },
            250,
        )
        board.train_pass(
            {"critic_loss": None, "actor_loss": None, "alpha": None}, 260
        )  # a pass without updates
        board.evaluation(
            [
                {"opponent": "Walls", "win_rate": 0.75, "score_share": 0.6},
                {"opponent": "SpinBot", "win_rate": 0.25, "score_share": 0.4},
            ],
            0.5,
            250,
        )
        board.evaluation([{"opponent": "Walls", "win_rate": 1.0, "score_share": 0.9}], None, 300)
    got = {tag: [(step, round(v, 6)) for step, v in points] for tag, points in read_scalars(tmp_path).items()}
    assert got["charts/episodic_return"] == [(140, 3.5), (170, -1.0), (220, -2.0), (240, 1.0), (250, 0.0)]
    assert [s for s, _ in got["charts/episodic_length"]] == [140, 170, 220, 240, 250]
    # Windows of 2 finished rounds; the truncated round has no result and stays out.
    assert got["charts/win_rate/Walls"] == [(140, 1.0), (220, 0.5), (250, 0.5)]
    assert got["charts/win_rate/SpinBot"] == [(240, 0.0)]
    assert got["charts/win_rate"] == [(140, 1.0), (220, 0.5), (240, 0.0), (250, 0.5)]
    assert got["charts/score_share/Walls"] == [(140, 0.9), (220, 0.5)]  # the last Walls line has no scores
    assert got["charts/score_share/SpinBot"] == [(240, 0.5)]  # no points yet: even
    # critic_loss sums both critics' losses; CleanRL's qf_loss is their mean. Nulls are left out.
    assert got["losses/qf_loss"] == [(250, 1.5)]
    assert got["losses/actor_loss"] == [(250, -1.5)]
    assert got["losses/alpha"] == [(250, 0.1)]
    assert got["losses/alpha_loss"] == [(250, 0.25)]
    assert "losses/kickstart_loss" not in got
    assert [s for s, _ in got["charts/SPS"]] == [250, 260] and all(v > 0 for _, v in got["charts/SPS"])
    assert got["eval/win_rate/Walls"] == [(250, 0.75), (300, 1.0)]
    assert got["eval/score_share/SpinBot"] == [(250, 0.4)]
    assert got["eval/composite"] == [(250, 0.5)]


def test_train_fast_writes_the_cleanrl_scalars_beside_its_jsonl(tmp_path: Path) -> None:
    out, board = tmp_path / "weights", tmp_path / "tb"
    summary = train_fast(
        "SpinBot,Target",
        out,
        steps=1200,
        envs=4,
        seed=1,
        updates_per_step=0.1,
        warmup_steps=400,
        save_every=600,
        best_window=3,
        max_turns=150,
        tensorboard=board,
    )
    got = read_scalars(board)
    for tag in (
        "charts/episodic_return",
        "charts/episodic_length",
        "charts/SPS",
        "losses/qf_loss",
        "losses/qf1_loss",
        "losses/qf2_loss",
        "losses/actor_loss",
        "losses/alpha",
        "losses/alpha_loss",
    ):
        assert got.get(tag), f"no {tag} in {sorted(got)}"
    rounds = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert len(rounds) == summary.rounds
    assert [v for _, v in got["charts/episodic_return"]] == pytest.approx([r["reward_sum"] for r in rounds])
    assert [v for _, v in got["charts/episodic_length"]] == [r["turns"] for r in rounds]
    metrics = [json.loads(line) for line in (out / "training_metrics.jsonl").read_text().splitlines()]
    assert [s for s, _ in got["losses/actor_loss"]] == [m["env_steps"] for m in metrics if "actor_loss" in m]
    assert [v for _, v in got["losses/qf_loss"]] == pytest.approx(
        [m["critic_loss"] / 2 for m in metrics if "critic_loss" in m]
    )
    assert [a + b for (_, a), (_, b) in zip(got["losses/qf1_loss"], got["losses/qf2_loss"], strict=True)] == (
        pytest.approx([m["critic_loss"] for m in metrics if "critic_loss" in m])
    )
    steps = [s for s, _ in got["charts/episodic_return"]]
    assert steps == sorted(steps) and steps[-1] <= summary.env_steps
    finished = {r["opponent"] for r in rounds if r["outcome"] != "truncated"}
    assert {f"charts/win_rate/{name}" for name in finished} <= set(got)


@pytest.fixture
def without_tensorboard(tmp_path: Path) -> dict[str, str]:
    """An environment whose Python cannot import the tensorboard package (a shadowing module refuses)."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "tensorboard.py").write_text("raise ImportError('No module named tensorboard')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SACBOT_")}
    return {**env, "PYTHONPATH": os.pathsep.join([str(shadow), env.get("PYTHONPATH", "")])}


@pytest.mark.parametrize(
    ("command", "extra_env"),
    [
        (
            [
                "train-fast",
                "--opponents",
                "Target",
                "--steps",
                "10",
                "--out",
                "{tmp}/w",
                "--tensorboard",
                "{tmp}/tb",
            ],
            {},
        ),
        (["play"], {"SACBOT_TENSORBOARD": "{tmp}/tb", "SACBOT_WEIGHTS_DIR": "{tmp}/w"}),
        (["play", "--tensorboard", "{tmp}/tb"], {"SACBOT_WEIGHTS_DIR": "{tmp}/w"}),
        (
            [
                "train-campaign",
                str(REPO / "campaigns" / "smoke.toml"),
                "--out",
                "{tmp}/w",
                "--tensorboard",
                "{tmp}/tb",
            ],
            {},
        ),
    ],
)
def test_without_the_extra_tensorboard_is_one_clear_line(
    tmp_path: Path, without_tensorboard: dict[str, str], command: list[str], extra_env: dict[str, str]
) -> None:
    args = [part.replace("{tmp}", str(tmp_path)) for part in command]
    env = {**without_tensorboard, **{k: v.replace("{tmp}", str(tmp_path)) for k, v in extra_env.items()}}
    result = subprocess.run(
        [sys.executable, "-m", "sacbot", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "tensorboard package" in result.stderr and "sacbot[tensorboard]" in result.stderr
    assert not (tmp_path / "tb").exists() and not (tmp_path / "w").exists()
