"""Where `sacbot play` finds its identity and keeps its weights and logs: never the current directory.

- Identity JSON: SACBOT_BOT_JSON, else the repository's `bots/SacBot/SacBot.json` (found from the package's
  own location, so the working directory never matters; `bots/SacBot/SacBot.sh` sets SACBOT_BOT_JSON to its
  own JSON).
- Weights folder: SACBOT_WEIGHTS_DIR, else `weights/` inside the identity JSON's folder (the bot directory).
"""

from __future__ import annotations

from pathlib import Path

import sacbot
from sacbot.errors import UserError
from sacbot.rundir import WEIGHTS_DIR
from sacbot.settings import SacbotSettings

BOT_NAME = "SacBot"


def repo_bot_dir() -> Path:
    """`bots/SacBot` of the checkout this package runs from (src layout: <repo>/src/sacbot/__init__.py)."""
    return Path(sacbot.__file__).resolve().parents[2] / "bots" / BOT_NAME


def bot_json_path(settings: SacbotSettings) -> Path:
    path = settings.bot_json if settings.bot_json is not None else repo_bot_dir() / f"{BOT_NAME}.json"
    path = path.expanduser().resolve()
    if not path.is_file():
        raise UserError(f"bot identity file {path} not found (set SACBOT_BOT_JSON to a <Name>.json)", 2)
    return path


def weights_dir(settings: SacbotSettings, bot_json: Path) -> Path:
    if settings.weights_dir is not None:
        return settings.weights_dir.expanduser().resolve()
    return bot_json.parent / WEIGHTS_DIR
