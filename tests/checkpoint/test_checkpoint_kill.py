"""A writer SIGKILLed at random moments leaves a slot that always loads and never holds a worse score."""

from __future__ import annotations

import math
import os
import random
import signal
import time
from pathlib import Path

import numpy as np

from sacbot.checkpoint import (
    CheckpointMeta,
    best_path,
    latest_path,
    load_checkpoint,
    promote,
    save_checkpoint,
)
from sacbot.checkpoint.atomic import TEMP_SUFFIX

KILLS = 100


def _writer_loop(folder: Path, start: float, seed: int) -> None:
    """Offer drifting scores to best.zip and save latest.zip, forever; the arrays echo their score."""
    rng = random.Random(seed)
    score, step = start, 0
    while True:
        score += rng.uniform(-1.0, 2.0)
        step += 1
        arrays = {"w": np.full((256,), score), "step": np.array(step, dtype=np.int64)}
        meta = CheckpointMeta(env_steps=step, extra={"score": score})
        promote(best_path(folder), arrays, meta, score, "eval_return", warn=lambda _: None)
        save_checkpoint(latest_path(folder), arrays, meta)


def _check_consistent(path: Path) -> CheckpointMeta | None:
    if not path.exists():
        return None
    arrays, meta = load_checkpoint(path)  # raises if the file is broken
    assert meta is not None
    assert np.all(arrays["w"] == meta.extra["score"]), "arrays and meta from different writes"
    assert int(arrays["step"]) == meta.env_steps
    return meta


def test_sigkilled_writer_never_leaves_a_broken_or_worse_slot(tmp_path: Path) -> None:
    rng = random.Random(1234)
    best_seen = -math.inf
    mid_write_kills = 0
    for kill in range(KILLS):
        temps_before = set(tmp_path.glob(f".*{TEMP_SUFFIX}"))
        pid = os.fork()
        if pid == 0:  # the child: write until killed; never return into pytest
            try:
                _writer_loop(tmp_path, best_seen - 1.0 if math.isfinite(best_seen) else 0.0, seed=kill)
            finally:
                os._exit(3)
        time.sleep(rng.uniform(0.0, 0.02))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (
            f"writer died early: {status}"
        )
        if set(tmp_path.glob(f".*{TEMP_SUFFIX}")) - temps_before:
            mid_write_kills += 1
        best = _check_consistent(best_path(tmp_path))
        _check_consistent(latest_path(tmp_path))
        if best is not None:
            assert best.score is not None and best.score >= best_seen, f"kill {kill}: best got worse"
            best_seen = best.score
    assert math.isfinite(best_seen)
    # Kills did land inside writes (a temporary file left behind): the atomicity was really exercised.
    assert mid_write_kills > 0
