"""The mypyc-compiled engine (`sacbot.compiled`): used only when built from exactly these sources, and it
plays exactly the same game as the Python modules it is compiled from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from sacbot import compiled
from sacbot.env.arena_env import TankRoyaleEnv

PLAY = """
import hashlib, json, sys
import numpy as np
from sacbot.compiled import engine_is_compiled
from sacbot.env.arena_env import TankRoyaleEnv
digests = {}
for name in sys.argv[1:]:
    env = TankRoyaleEnv(name)
    actions = np.random.default_rng(7).uniform(-1, 1, (600, 4)).astype(np.float32)
    obs, _ = env.reset(seed=3)
    h = hashlib.sha256(obs.tobytes())
    for a in actions:
        obs, reward, terminated, truncated, info = env.step(a)
        h.update(obs.tobytes()); h.update(repr((reward, terminated, truncated)).encode())
        if terminated or truncated:
            obs, _ = env.reset()
            h.update(obs.tobytes())
    digests[name] = h.hexdigest()
print(json.dumps({"compiled": engine_is_compiled(), "digests": digests}))
"""
OPPONENTS = ["SpinBot", "Corners", "Target", "RamFire"]


def _play(env_vars: dict[str, str]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PLAY, *OPPONENTS],
        env={**os.environ, **env_vars},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_compiled_and_python_modules_play_the_same_rounds() -> None:
    python = _play({"SACBOT_COMPILED": "0"})
    assert python["compiled"] is False
    default = _play({})
    assert default["compiled"] is compiled.engine_is_compiled()
    assert default["digests"] == python["digests"]


def test_the_compiled_engine_is_used_where_it_can_be_built() -> None:
    """`pip install` builds it (hatch_build.py); after editing an engine module, `sacbot build-engine`."""
    has_cc = shutil.which(os.environ.get("CC", "cc")) is not None or shutil.which("gcc") is not None
    assert compiled.engine_is_compiled() is (has_cc and compiled.enabled()), (
        "the compiled engine is not in use: run `sacbot build-engine` (it names the error)"
    )
    TankRoyaleEnv("SpinBot").reset(seed=0)  # and it runs


def _copy_sources(dest: Path) -> None:
    for name in compiled.COMPILED_MODULES:
        target = compiled.module_path(name, dest)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(compiled.module_path(name), target)


def test_a_changed_source_is_a_different_build(tmp_path: Path) -> None:
    _copy_sources(tmp_path)
    assert compiled.source_digest(tmp_path) == compiled.source_digest()
    rules = compiled.module_path("sacbot.engine.rules", tmp_path)
    rules.write_text(rules.read_text() + "\n# an edit\n")
    assert compiled.source_digest(tmp_path) != compiled.source_digest()


def test_only_a_complete_undamaged_build_folder_is_used(tmp_path: Path) -> None:
    suffix = compiled.ext_suffix()
    rels = [name.replace(".", "/") + suffix for name in compiled.COMPILED_MODULES] + [f"abc__mypyc{suffix}"]
    for rel in rels:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"\x7fELF" + b"\0" * 60)
    assert compiled.compiled_files(tmp_path) is None  # interrupted: no COMPLETE manifest
    (tmp_path / compiled.COMPLETE).write_text("digest\n" + "".join(f"{rel} 64\n" for rel in rels))
    files = compiled.compiled_files(tmp_path)
    assert files is not None and set(files) == {*compiled.COMPILED_MODULES, "abc__mypyc"}
    (tmp_path / rels[3]).write_bytes(b"\x7fELF")  # truncated
    assert compiled.compiled_files(tmp_path) is None
    (tmp_path / rels[3]).unlink()  # missing
    assert compiled.compiled_files(tmp_path) is None


def test_build_engine_names_an_existing_build() -> None:
    assert compiled.compiled_files(compiled.build_folder()) is not None, "run `sacbot build-engine` first"
    out = subprocess.run(
        [sys.executable, "-m", "sacbot", "build-engine"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "already built" in out.stdout and str(compiled.build_folder()) in out.stdout
