"""Shared by the campaign tests: a scripted backend standing in for the game processes of the campaign loop
(real checkpoints; the tests subclass it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sacbot.campaign.loop import ChunkFailed, ChunkOutcome, GameScore
from sacbot.checkpoint import CheckpointMeta, save_checkpoint
from sacbot.rundir import RunPaths


class ScriptedBackend:
    """Each chunk attempt pops a step: "ok" trains (writes `latest` with a new value) or "crash" fails."""

    def __init__(self, out: Path, chunk_steps: list[str], eval_shares: list[float]) -> None:
        self.paths = RunPaths(out)
        self.chunk_steps = list(chunk_steps)
        self.eval_shares = list(eval_shares)
        self.trained = 0
        self.calls: list[tuple[str, int | float | str]] = []  # a float: the weight `Records` saw

    def run_chunk(self, chunk: int, opponent: str, rounds: int, report: Any) -> ChunkOutcome:
        self.calls.append(("chunk", chunk))
        step = self.chunk_steps.pop(0)
        if step == "crash":
            raise ChunkFailed("bot process exited with code -9")
        if step == "interrupt":
            raise KeyboardInterrupt
        self.trained += 1
        save_checkpoint(self.paths.latest, {"w": np.full(3, self.trained, np.float32)}, CheckpointMeta())
        return ChunkOutcome(rounds=rounds, wins=1, score_share=0.5, seconds=0.1)

    def run_eval(self, checkpoint: Path, opponent: str, rounds: int, report: Any) -> GameScore:
        self.calls.append(("eval", opponent))
        share = self.eval_shares.pop(0)
        return GameScore(rounds=rounds, wins=1, win_rate=0.5, score_share=share, bullet_damage=10.0)

    def pretrain(self, report: Any) -> None:
        raise AssertionError("no pretraining here")

    def close(self) -> None:
        pass
