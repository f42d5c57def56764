"""A campaign's `[log] tensorboard`: parsed, passed on to pretraining and every chunk's bot, and the evals'
composites written by the campaign itself."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot import jsonl
from sacbot.campaign.config import Campaign, load_campaign, parse_campaign
from sacbot.campaign.loop import CampaignLoop, ChunkOutcome
from sacbot.campaign.runner import ArenaBackend
from sacbot.campaign.watch import WatchedGame
from sacbot.checkpoint import CheckpointMeta, save_checkpoint
from sacbot.errors import UserError
from sacbot.rundir import RunPaths
from sacbot.tensorboard import read_scalars

from .campaign_support import ScriptedBackend

BASE: dict[str, Any] = {
    "name": "tb",
    "chunks": {"rounds": 2, "budget": 2},
    "opponents": {"SpinBot": 1},
    "eval": {"every": 1, "rounds": 2, "opponents": ["SpinBot", "Walls"]},
}


def with_board(board: Path | str, **more: Any) -> Campaign:
    return parse_campaign({**BASE, **more, "log": {"tensorboard": str(board)}})


def test_the_log_table_parses_and_rejects_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        'name = "tb"\n[chunks]\nrounds = 1\nbudget = 1\n[opponents]\nSpinBot = 1\n'
        '[log]\ntensorboard = "runs/tb/board"\n'
    )
    assert load_campaign(path).log.tensorboard == Path("runs/tb/board")
    assert parse_campaign(BASE).log.tensorboard is None
    with pytest.raises(UserError, match=r"log\.tensorboard_dir: Extra inputs are not permitted") as err:
        parse_campaign({**BASE, "log": {"tensorboard_dir": "x"}})
    assert err.value.exit_code == 2


def test_pretraining_and_every_chunk_bot_get_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = tmp_path / "board"
    campaign = with_board(board, pretrain={"steps": 100, "opponents": ["SpinBot"]})
    backend = ArenaBackend(campaign, RunPaths(tmp_path / "run"))
    bot_envs: list[dict[str, str]] = []

    def game(**kwargs: Any) -> WatchedGame:
        bot_envs.append(dict(kwargs["bot_env"]))
        return WatchedGame(rounds=kwargs["rounds"], results=[], seconds=0.1, wins=0)

    commands: list[list[str]] = []

    class Pretraining:  # the train-fast process, as the backend starts and waits for it
        def __init__(self, cmd: list[str], **kwargs: Any) -> None:
            commands.append(cmd)

        def wait(self, timeout: float | None = None) -> int:
            return 0

    monkeypatch.setattr(backend, "_game", game)
    monkeypatch.setattr(subprocess, "Popen", Pretraining)
    backend.pretrain(lambda event: None)
    backend.run_chunk(1, "SpinBot", 2, lambda event: None)
    backend.run_eval(tmp_path / "candidate.zip", "SpinBot", 2, lambda event: None)
    (cmd,) = commands
    assert cmd[cmd.index("--tensorboard") + 1] == str(board.resolve())
    chunk_env, eval_env = bot_envs
    assert chunk_env["SACBOT_TENSORBOARD"] == str(board.resolve())
    assert "SACBOT_TENSORBOARD" not in eval_env  # eval games write nothing

    plain = ArenaBackend(parse_campaign(BASE), RunPaths(tmp_path / "plain"))
    monkeypatch.setattr(plain, "_game", game)
    plain.run_chunk(1, "SpinBot", 2, lambda event: None)
    assert "SACBOT_TENSORBOARD" not in bot_envs[-1]


class StepsBackend(ScriptedBackend):
    """Chunk k leaves a `latest` that has seen 1000 * k environment steps."""

    def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Any) -> ChunkOutcome:
        outcome = super().run_chunk(chunk, opponent, rounds, report)
        meta = CheckpointMeta(env_steps=1000 * chunk)
        save_checkpoint(self.paths.latest, {"w": np.full(3, chunk, np.float32)}, meta)
        return outcome


def test_the_campaign_writes_each_eval_at_the_candidates_env_steps(tmp_path: Path) -> None:
    board = tmp_path / "board"
    backend = StepsBackend(tmp_path / "run", ["ok", "ok"], [0.2, 0.4, 0.6, 0.8])
    CampaignLoop(with_board(board), tmp_path / "run", backend).run()
    got = read_scalars(board)
    evals = jsonl.read(tmp_path / "run" / "eval_log.jsonl").rows
    done = [e for e in jsonl.read(tmp_path / "run" / "campaign_log.jsonl").rows if e["event"] == "eval_done"]
    assert [s for s, _ in got["eval/composite"]] == [1000, 2000]
    assert [v for _, v in got["eval/composite"]] == pytest.approx([e["composite"] for e in done])
    for name in ("SpinBot", "Walls"):
        rows = [e for e in evals if e["opponent"] == name]
        assert [v for _, v in got[f"eval/score_share/{name}"]] == pytest.approx(
            [e["score_share"] for e in rows]
        )
        assert [v for _, v in got[f"eval/win_rate/{name}"]] == pytest.approx([e["win_rate"] for e in rows])
