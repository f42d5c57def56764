"""`sacbot make-twin`: a self-contained clone bot directory for self-play.

`<bots_dir>/<Name>/` gets its own identity (`<Name>.json`), launch scripts (`<Name>.sh`, `<Name>.cmd`), a
frozen copy of the source checkpoint (`frozen.zip`, never written again), its own weights folder seeded from
that copy (`weights/latest.zip`) and its own round counter. Frozen twins play in eval mode from `frozen.zip`;
a learning twin trains its own `weights/latest.zip`. Re-running resets the twin to the frozen baseline. A
`twin.json` marker says the folder is a twin, so make-twin never overwrites a bot directory it did not write.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sacbot.botinfo import bot_file_path, parse_bot_info, read_bot_file
from sacbot.errors import UserError
from sacbot.rundir import WEIGHTS_DIR, WeightsPaths

MARKER = "twin.json"
TRAINING_BOT = "SacBot"


@dataclass(frozen=True)
class TwinResult:
    folder: Path
    source: Path
    learning: bool
    reset: bool


def _identity(bots_dir: Path, name: str, learning: bool) -> dict[str, Any]:
    """The twin's `<Name>.json`: the training bot's (else sacbot's defaults) under the twin's name."""
    base: dict[str, Any] = {
        "version": "1.0",
        "authors": ["sacbot"],
        "gameTypes": ["1v1", "classic", "melee", "twinduel", "custom"],
        "platform": "Python",
        "programmingLang": "Python 3",
    }
    source = bots_dir / TRAINING_BOT
    if bot_file_path(source).is_file():  # a broken one is an error, not silently replaced by the defaults
        base.update(read_bot_file(source).to_json())
    base.pop("base", None)  # the twin's files are named after its own folder
    base.pop("teamMembers", None)
    mode = "learning" if learning else "frozen"
    base["name"] = name
    base["description"] = f"A {mode} twin of {TRAINING_BOT} written by `sacbot make-twin`"
    return parse_bot_info(base, f"{name}.json").to_json()


def _sh_script(name: str, learning: bool) -> str:
    checkpoint = "$HERE/weights/latest.zip" if learning else "$HERE/frozen.zip"
    python = sys.executable
    return f"""#!/bin/sh
# A {"learning" if learning else "frozen"} twin of {TRAINING_BOT} by `sacbot make-twin` (re-run it to reset).
# Its own identity, weights folder and round counter; nothing here touches {TRAINING_BOT}'s files.
cd "$(dirname "$0")" || exit 1
HERE="$(pwd)"
export SACBOT_BOT_JSON="$HERE/{name}.json"
export SACBOT_WEIGHTS_DIR="$HERE/weights"
export SACBOT_CHECKPOINT="{checkpoint}"
export SACBOT_EVAL_MODE={0 if learning else 1}
unset SACBOT_OPPONENT
PY="${{SACBOT_PYTHON:-{python}}}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
exec "$PY" -m sacbot play
"""


def _cmd_script(name: str, learning: bool) -> str:
    checkpoint = "%HERE%weights\\latest.zip" if learning else "%HERE%frozen.zip"
    return f"""@echo off
rem A twin of {TRAINING_BOT}, written by `sacbot make-twin` (re-run it to reset).
cd /d "%~dp0"
set "HERE=%~dp0"
set "SACBOT_BOT_JSON=%HERE%{name}.json"
set "SACBOT_WEIGHTS_DIR=%HERE%weights"
set "SACBOT_CHECKPOINT={checkpoint}"
set "SACBOT_EVAL_MODE={0 if learning else 1}"
set "SACBOT_OPPONENT="
if "%SACBOT_PYTHON%"=="" (set "PY=python") else (set "PY=%SACBOT_PYTHON%")
"%PY%" -m sacbot play
"""


def make_twin(source: Path | None, name: str, bots_dir: Path, learning: bool) -> TwinResult:
    from sacbot.checkpoint import atomic_write_bytes, atomic_write_json, atomic_write_text, load_checkpoint
    from sacbot.checkpoint.slots import validate_opponent_name
    from sacbot.records import write_round_counter

    validate_opponent_name(name)
    if name == TRAINING_BOT:
        raise UserError(f"--name: a twin cannot be called {TRAINING_BOT}", exit_code=2)
    if source is None:
        source = WeightsPaths(bots_dir / TRAINING_BOT / WEIGHTS_DIR).best
        if not source.is_file():
            raise UserError(f"no global best at {source}; name a checkpoint with --from FILE", exit_code=2)
    load_checkpoint(source)  # refuses a corrupt or pickled archive before anything is written
    data = source.read_bytes()
    identity = _identity(bots_dir, name, learning)  # so does a broken training bot's JSON

    folder = bots_dir / name
    reset = folder.exists()
    if reset and not (folder / MARKER).is_file():
        raise UserError(f"{folder} exists and is not a twin made by make-twin; choose another --name", 2)
    folder.mkdir(parents=True, exist_ok=True)
    weights = WeightsPaths(folder / WEIGHTS_DIR)
    if weights.folder.exists():
        shutil.rmtree(weights.folder)  # the reset: the twin's training state goes back to the frozen baseline
    atomic_write_bytes(folder / "frozen.zip", data)
    atomic_write_bytes(weights.latest, data)
    write_round_counter(weights.round_counter, 0, time.time())
    atomic_write_text(folder / f"{name}.json", json.dumps(identity, indent=2) + "\n")
    sh = folder / f"{name}.sh"
    atomic_write_text(sh, _sh_script(name, learning))
    sh.chmod(0o755)
    atomic_write_text(folder / f"{name}.cmd", _cmd_script(name, learning).replace("\n", "\r\n"))
    atomic_write_json(
        folder / MARKER,
        {"name": name, "source": str(source.resolve()), "learning": learning, "created": time.time()},
    )
    return TwinResult(folder, source, learning, reset)
