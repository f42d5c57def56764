"""Joining a cluster the standard way: `ray start --head` here, then `sacbot eval --ray` with RAY_ADDRESS
(and Ray's token authentication, which `ray start` turns on); without the token: one error line."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sacbot.agent.trainer import SacTrainer
from sacbot.agent.trainer_config import TrainerConfig
from sacbot.checkpoint import CheckpointMeta, save_checkpoint

RAY = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def head() -> Iterator[str]:
    port = _free_port()
    started = subprocess.run(
        [RAY, "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats"],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=180)


def _eval(checkpoint: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", "eval", "--ray", "--checkpoint", str(checkpoint),
         "--opponents", "Target,SpinBot", "--rounds", "1", "--json"],
        capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )  # fmt: skip


def _checkpoint(tmp_path: Path) -> Path:
    trainer = SacTrainer(TrainerConfig(device="cpu"))
    path = tmp_path / "policy.zip"
    save_checkpoint(path, trainer.state_arrays(), CheckpointMeta(0, 0, trainer.network_sizes()))
    return path


def test_eval_joins_a_started_cluster(head: str, tmp_path: Path) -> None:
    result = _eval(_checkpoint(tmp_path), {"RAY_ADDRESS": head, "RAY_AUTH_MODE": "token"})
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert len(rows) == 1 and '"opponent": "Target"' in rows[0] and '"opponent": "SpinBot"' in rows[0]
    assert "Connecting to existing Ray cluster" in result.stderr


def test_a_cluster_it_cannot_join_is_one_error_line(head: str, tmp_path: Path) -> None:
    """Without RAY_AUTH_MODE=token Ray does not send the cluster's token to an explicit address: refused."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    result = subprocess.run(
        [sys.executable, "-m", "sacbot", "eval", "--ray", "--checkpoint", str(_checkpoint(tmp_path)),
         "--opponents", "Target", "--rounds", "1"],
        capture_output=True, text=True, timeout=300, env={**env, "RAY_ADDRESS": head},
    )  # fmt: skip
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("sacbot: error:")]
    assert len(errors) == 1
    assert errors[0].startswith(f"sacbot: error: cannot join the Ray cluster at {head}")
    assert "Traceback" not in result.stderr
