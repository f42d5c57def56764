"""`sacbot export-bot`: write a bot folder that plays a checkpoint on the official Python Bot API.

`<out>/<Name>/` is a bot directory as the official booter expects one (`<Name>.json` in a folder of the same
name, inside a bot root directory):

    <Name>.json          name, version, authors, description, gameTypes, platform "Python", programmingLang
    <Name>.py            the official `Bot` subclass (`sacbot/export/botfile.py`, copied unchanged)
    <Name>.sh, .cmd      install requirements.txt into ./venv on first use, then run <Name>.py
    requirements.txt     robocode-tank-royale and numpy, in compatible ranges
    weights.npz          the actor's arrays (numpy, loaded with allow_pickle=False)
    policy.json          radar mode, network sizes, the weights' SHA-256, where they came from
    lib/sacbot/...       the project's own feature, inference and protocol modules (`VENDORED`), unchanged

The checkpoint is read with the project's checkpoint reader (verified, never unpickled) and checked against
the actor's shapes; the radar mode is the one `sacbot play` would take (`radar_mode_for`). The folder is
built under a temporary name beside the target and renamed into place, so a failed export leaves nothing
behind and an existing folder is replaced only with `force` (keeping its installed `venv/`).
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sacbot.checkpoint.atomic import fsync_folder
from sacbot.errors import UserError

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # src/sacbot (or site-packages/sacbot)
LIB = "lib"
VENV = "venv"  # made by <Name>.sh / .cmd; kept when an export replaces the folder
TEMP_SUFFIX = ".sacbot-tmp"

# The closed set of project modules the exported policy imports, copied unchanged (`check_closed` proves the
# set closed). Not torch's networks: inference.py steps the actor in numpy (or its small C kernel, built on
# first use where a C compiler exists, else numpy).
VENDORED = (
    "sacbot/agent/__init__.py",
    "sacbot/agent/features.py",
    "sacbot/agent/inference.py",
    "sacbot/agent/native_build.py",
    "sacbot/agent/native_step.py",
    "sacbot/agent/options.py",
    "sacbot/agent/sizes.py",
    "sacbot/export/__init__.py",
    "sacbot/export/policy.py",
    "sacbot/protocol/_convert.py",
    "sacbot/protocol/models.py",
)
# Two package files are written instead of copied: the project's own import what the export leaves out.
GENERATED = {
    # sacbot/__init__.py installs the mypyc-compiled engine's finder, which reads the engine's sources.
    "sacbot/__init__.py": '"""sacbot\'s policy modules, shipped in a bot folder by `sacbot export-bot`."""\n',
    # sacbot/protocol/__init__.py also exports the JSON codec, which needs pydantic-core; the models do not.
    "sacbot/protocol/__init__.py": (
        '"""The Tank Royale wire models (a bot folder needs only the models, not the JSON codec)."""\n\n'
        "from sacbot.protocol import models\n"
        "from sacbot.protocol._convert import ProtocolError\n"
        "from sacbot.protocol.models import *  # noqa: F403\n\n"
        '__all__ = [*models.__all__, "ProtocolError"]\n'
    ),
}
BOT_FILE = "sacbot/export/botfile.py"

REQUIREMENTS = """\
# The official Python Bot API (its major version must match the server's) and numpy; nothing else.
robocode-tank-royale>=1.4,<2
numpy>=1.26,<3
"""
# As bots/SacBot/SacBot.json: the features follow the nearest scanned bot, so any game type plays.
GAME_TYPES = ["classic", "1v1", "melee", "custom"]

_PLAYS = {
    "mean": "deterministically",
    "sampled": "actions drawn from its policy",
    "speed": "its policy's mean with the target speed drawn",
}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,29}$")  # a folder, a file base, and the Bot API's <= 30 chars


@dataclass(frozen=True)
class ExportResult:
    folder: Path
    radar_mode: str
    radar_source: str
    updates: int | None
    native_here: bool  # whether this machine steps the actor in the C kernel (the bot decides where it runs)


def validate_bot_name(name: str) -> str:
    if not _NAME.match(name):
        raise UserError(
            f"invalid bot name {name!r}: a letter, then letters, digits, '_' or '-' (at most 30 characters)",
            2,
        )
    return name


def _module_of(rel: str) -> str:
    return rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imported_sacbot_modules(source: str, module: str) -> set[str]:
    """Every `sacbot...` module a source file imports (a `from package import name` counts `package.name`
    when that is a module of the package)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "sacbot")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")[: -node.level]
                base = ".".join([*parts, base] if base else parts)
            if base.split(".")[0] != "sacbot":
                continue
            found.add(base)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                path = PACKAGE_ROOT.parent.joinpath(*sub.split("."))
                if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
                    found.add(sub)
    return found


def check_closed(files: Mapping[str, str]) -> None:
    """Every sacbot module the shipped files import is shipped too (else the bot would fail to start)."""
    shipped = {_module_of(rel) for rel in files}
    for rel, source in files.items():
        missing = imported_sacbot_modules(source, _module_of(rel)) - shipped
        if missing:
            raise RuntimeError(
                f"the exported {rel} imports {', '.join(sorted(missing))}, which is not shipped"
            )


def vendored_sources() -> dict[str, str]:
    """lib/ path -> text: the copied modules (this installation's sources) and the two package files."""
    files = {rel: (PACKAGE_ROOT.parent / rel).read_text(encoding="utf-8") for rel in VENDORED}
    files.update(GENERATED)
    check_closed(files)
    return files


def _actor_specs(sizes: Any) -> dict[str, tuple[tuple[int, ...], str]]:
    """The actor's array names, shapes and dtypes, from the torch module the trainer builds (play's check)."""
    from sacbot.agent.networks import Actor

    return {
        f"actor.{name}": (tuple(p.shape), str(p.dtype).removeprefix("torch."))
        for name, p in Actor(sizes).named_parameters()
    }


def _read_actor(checkpoint: Path) -> tuple[dict[str, np.ndarray], Any, Any]:
    """(actor arrays, meta or None, sizes) of a checkpoint; CheckpointError (one line) when unusable."""
    from sacbot.checkpoint import CheckpointError, load_checkpoint, read_meta
    from sacbot.export.policy import sizes_from_dict

    meta = read_meta(checkpoint)  # a missing or broken file fails here, before torch loads
    try:
        sizes = sizes_from_dict(meta.network_sizes if meta is not None else {})
    except ValueError as exc:
        raise CheckpointError(f"{checkpoint}: meta.json has unusable network sizes ({exc})") from None
    arrays, meta = load_checkpoint(checkpoint, _actor_specs(sizes), subset=True)
    return arrays, meta, sizes


def _identity(name: str, version: str, authors: Sequence[str], description: str) -> dict[str, Any]:
    if not version.strip() or len(version) > 20:
        raise UserError(f"invalid --bot-version {version!r}: 1 to 20 characters", 2)
    if not authors or len(authors) > 20 or any(not a.strip() or len(a) > 50 for a in authors):
        raise UserError("invalid --authors: 1 to 20 names of at most 50 characters each", 2)
    return {
        "name": name,
        "version": version.strip(),
        "authors": [a.strip() for a in authors],
        "description": description[:250],
        "gameTypes": GAME_TYPES,
        "platform": "Python",
        "programmingLang": "Python 3",
    }


def _sh_script(name: str) -> str:
    return f"""#!/bin/sh
# {name}: a sacbot policy on the official Python Bot API (written by `sacbot export-bot`).
# A booter runs this with SERVER_URL and BOT_* set. The first run makes ./venv and installs requirements.txt
# there (Python 3.10+ and pip's index or cache needed once); later runs start at once. Without this script a
# booter runs `python3 {name}.py`, whose Python then needs requirements.txt installed.
cd -- "$(dirname -- "$0")" || exit 1

ready() {{ [ -x {VENV}/bin/python ] && cmp -s requirements.txt {VENV}/installed-requirements.txt; }}

install() {{
  py=""
  for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      py="$candidate"; break
    fi
  done
  if [ -z "$py" ]; then echo "{name}: error: Python 3.10+ not found (python3 or python)" >&2; return 1; fi
  if [ ! -x {VENV}/bin/python ] && ! "$py" -m venv {VENV} >&2; then
    echo "{name}: error: cannot make a virtual environment (Debian/Ubuntu: apt install python3-venv)" >&2
    return 1
  fi
  echo "{name}: installing requirements.txt into {VENV}/ (once)" >&2
  if ! {VENV}/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt >&2; then
    echo "{name}: error: pip could not install requirements.txt" >&2; return 1
  fi
  cp requirements.txt {VENV}/installed-requirements.txt
}}

if ! ready; then
  waited=0
  until mkdir .install-lock 2>/dev/null; do  # another copy of this bot is installing: wait for it
    if [ "$waited" -ge 600 ]; then
      echo "{name}: error: .install-lock is 10 minutes old; remove it if no install is running" >&2; exit 1
    fi
    sleep 1; waited=$((waited + 1))
  done
  trap 'rmdir .install-lock 2>/dev/null' EXIT
  trap 'exit 143' TERM INT HUP
  if ! ready; then install || exit 1; fi
  rmdir .install-lock; trap - EXIT TERM INT HUP
fi
exec {VENV}/bin/python {name}.py "$@"
"""


def _cmd_script(name: str) -> str:
    lines = [
        "@echo off",
        f"rem {name}: a sacbot policy on the official Python Bot API (written by `sacbot export-bot`).",
        "rem The first run makes .\\venv and installs requirements.txt there; later runs start at once.",
        "setlocal",
        'cd /d "%~dp0"',
        f'set "VPY={VENV}\\Scripts\\python.exe"',
        f'if exist "%VPY%" fc /b requirements.txt {VENV}\\installed-requirements.txt >nul 2>nul && goto run',
        'set "PY="',
        'where python3 >nul 2>nul && set "PY=python3"',
        'if not defined PY where python >nul 2>nul && set "PY=python"',
        f"if not defined PY (echo {name}: error: Python 3.10+ not found 1>&2 & exit /b 1)",
        f'if not exist "%VPY%" %PY% -m venv {VENV} 1>&2',
        f'if not exist "%VPY%" (echo {name}: error: cannot make a virtual environment 1>&2 & exit /b 1)',
        f"echo {name}: installing requirements.txt into {VENV}\\ (once) 1>&2",
        '"%VPY%" -m pip install -q --disable-pip-version-check -r requirements.txt 1>&2',
        f"if errorlevel 1 (echo {name}: error: pip could not install requirements.txt 1>&2 & exit /b 1)",
        f"copy /y requirements.txt {VENV}\\installed-requirements.txt >nul",
        ":run",
        f'"%VPY%" "{name}.py" %*',
        "exit /b %errorlevel%",
    ]
    return "\r\n".join(lines) + "\r\n"


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """A .npz (a zip of .npy members, as `numpy.savez` writes), by the checkpoint archive's own writer."""
    from sacbot.checkpoint.archive import write_archive

    buffer = io.BytesIO()
    write_archive(buffer, arrays, None)
    return buffer.getvalue()


def _write_tree(root: Path, files: Mapping[str, bytes], executable: Iterable[str]) -> None:
    from sacbot.checkpoint import atomic_write_bytes

    for rel, data in files.items():
        atomic_write_bytes(root / rel, data)  # written, flushed and fsynced before the folder is renamed
    for rel in executable:
        os.chmod(root / rel, 0o755)


def _swap_in(built: Path, target: Path) -> None:
    """Put the built folder at `target`: rename it there, or (an existing folder) rename the old one aside
    first, move its `venv/` into the new one and delete the rest; on a failure the old folder is restored."""
    if not target.exists():
        os.rename(built, target)
        return
    if not any(target.iterdir()):
        target.rmdir()
        os.rename(built, target)
        return
    aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old.", suffix=TEMP_SUFFIX))
    aside.rmdir()
    os.rename(target, aside)
    try:
        os.rename(built, target)
    except OSError:
        os.rename(aside, target)
        raise
    venv = aside / VENV
    if venv.is_dir() and not (target / VENV).exists():
        os.rename(venv, target / VENV)
    shutil.rmtree(aside, ignore_errors=True)


def export_bot(
    checkpoint: Path,
    name: str,
    out: Path,
    *,
    force: bool = False,
    radar_mode: str | None = None,
    actions: str = "mean",
    version: str = "1.0",
    authors: Sequence[str] = ("sacbot",),
) -> ExportResult:
    """Write `<out>/<name>/` from `checkpoint`; UserError (one line) on bad input, nothing written then."""
    from sacbot import __version__
    from sacbot.agent.inference import ACTION_MODES, FastActor, as_action_mode
    from sacbot.checkpoint.archive import now_iso
    from sacbot.export import policy
    from sacbot.runtime.startup import radar_mode_for

    validate_bot_name(name)
    if radar_mode not in (None, "spin", "lock"):
        raise UserError(f"invalid --radar-mode {radar_mode!r}: spin or lock", 2)
    action_mode = as_action_mode(actions)
    if action_mode is None:
        raise UserError(f"invalid --actions {actions!r}: one of {', '.join(ACTION_MODES)}", 2)
    target = out / name
    if target.exists() and not target.is_dir():
        raise UserError(f"{target} exists and is not a folder", 2)
    if target.is_dir() and any(target.iterdir()) and not force:
        raise UserError(f"{target} already exists and is not empty; pass --force to replace it", 1)

    arrays, meta, sizes = _read_actor(checkpoint)
    mode, mode_source = radar_mode_for(radar_mode, meta)
    if radar_mode is not None:
        mode_source = "--radar-mode"
    actor = FastActor(arrays, sizes)  # the shapes fit the sizes: the bot will load them too
    weights = _npz_bytes(arrays)
    source = {
        "checkpoint": checkpoint.name,
        "updates": meta.updates if meta is not None else None,
        "env_steps": meta.env_steps if meta is not None else None,
        "created": meta.created if meta is not None else None,
        "score": meta.score if meta is not None else None,
        "score_kind": meta.score_kind if meta is not None else None,
        "radar_mode_from": mode_source,
        "exported": now_iso(),
        "sacbot_version": __version__,
    }
    digest = hashlib.sha256(weights).hexdigest()
    description = policy.PolicyDescription(mode, sizes, digest, source, action_mode)
    updates = f"{meta.updates} updates" if meta is not None else "no metadata"
    identity = _identity(
        name,
        version,
        list(authors),
        f"A SAC-GRU policy exported by sacbot from {checkpoint.name} ({updates}, radar {mode}); "
        f"it plays {_PLAYS[action_mode]} and does not learn.",
    )
    files: dict[str, bytes] = {
        f"{name}.json": (json.dumps(identity, indent=2) + "\n").encode(),
        f"{name}.py": (PACKAGE_ROOT.parent / BOT_FILE).read_bytes(),
        f"{name}.sh": _sh_script(name).encode(),
        f"{name}.cmd": _cmd_script(name).encode(),
        "requirements.txt": REQUIREMENTS.encode(),
        policy.WEIGHTS_FILE: weights,
        policy.DESCRIPTION_FILE: (json.dumps(description.to_json_dict(), indent=1) + "\n").encode(),
    }
    for rel, text in vendored_sources().items():
        files[f"{LIB}/{rel}"] = text.encode("utf-8")

    try:
        out.mkdir(parents=True, exist_ok=True)
        built = Path(tempfile.mkdtemp(dir=out, prefix=f".{name}.", suffix=TEMP_SUFFIX))
    except OSError as exc:
        raise UserError(f"{out}: cannot write there ({exc.strerror or exc})") from None
    try:
        _write_tree(built, files, [f"{name}.sh", f"{name}.py"])
        built.chmod(0o755)
        _swap_in(built, target)
        fsync_folder(out)
    except OSError as exc:
        shutil.rmtree(built, ignore_errors=True)
        where = f"{exc.filename}: " if exc.filename else ""
        raise UserError(f"cannot write the bot folder {target}: {where}{exc.strerror or exc}") from None
    return ExportResult(target, mode, mode_source, meta.updates if meta is not None else None, actor.native)
