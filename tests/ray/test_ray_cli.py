"""`--ray` from the command line: one clear error line without Ray, and options it does not take."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _sacbot(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args], capture_output=True, text=True, timeout=120, env=env
    )


def _no_ray_env(tmp_path: Path) -> dict[str, str]:
    """An environment in which `import ray` fails, as where the extra is not installed."""
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    path = os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


@pytest.mark.parametrize(
    "args",
    [
        ["train-fast", "--ray", "--steps", "10"],
        ["bench", "ray", "--json"],
    ],
)
def test_ray_options_without_ray_are_one_error_line(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "w"
    result = _sacbot(
        [*args, *(["--out", str(out)] if args[0] == "train-fast" else [])], _no_ray_env(tmp_path)
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "sacbot: error: --ray needs Ray, which is not installed: pip install 'sacbot[ray]'"
    ]
    assert not out.exists()


def test_train_fast_ray_refuses_options_that_need_the_arenas_here(tmp_path: Path) -> None:
    result = _sacbot(
        ["train-fast", "--ray", "--workers", "1", "--out", str(tmp_path / "w")], dict(os.environ)
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "sacbot: error: --ray runs the arenas in Ray runners: --workers is not taken with it"
    ]
