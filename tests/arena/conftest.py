"""Fixtures of the arena tests: bot directories written on the fly, waiting with a deadline, live
processes."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest


def _make_bot_dir(
    root: Path,
    name: str,
    *,
    py: str | None = None,
    sh: str | None = None,
    info: dict[str, object] | None = None,
) -> Path:
    d = root / name
    d.mkdir(parents=True)
    meta: dict[str, object] = {
        "name": name,
        "version": "1.0",
        "authors": ["tests"],
        "gameTypes": ["1v1", "classic"],
        "platform": "Python",
        "programmingLang": "Python 3",
    }
    meta.update(info or {})
    (d / f"{name}.json").write_text(json.dumps(meta))
    if py is not None:
        (d / f"{name}.py").write_text(py)
    if sh is not None:
        (d / f"{name}.sh").write_text(sh)
    return d


def _wait_for(cond: Callable[[], object], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.fixture(scope="session")
def make_bot_dir() -> Callable[..., Path]:
    """`make_bot_dir(root, name, *, py=None, sh=None, info=None)`: a bot directory root/name with its
    <name>.json (info overriding the defaults) and, when given, its <name>.py and <name>.sh."""
    return _make_bot_dir


@pytest.fixture(scope="session")
def wait_for() -> Callable[[Callable[[], object], float, str], None]:
    """`wait_for(cond, timeout, what)`: polls cond() until true; fails after timeout seconds."""
    return _wait_for


@pytest.fixture(scope="session")
def pid_alive() -> Callable[[int], bool]:
    """`pid_alive(pid)`: the process exists and is not a zombie."""
    return _pid_alive
