"""The bot's identity for its BotHandshake, resolved in the official libraries' order.

1. an explicit argument (a `BotIdentity`, or a mapping in the JSON file's camelCase keys);
2. a `<Name>.json` bot config file (the booter's format: name, version, authors required);
3. the `BOT_*` variables the booter passes (BOT_NAME, BOT_VERSION, BOT_AUTHORS, ...).
The team fields always come from TEAM_ID, TEAM_NAME, TEAM_VERSION, as in the official libraries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sacbot.errors import UserError
from sacbot.protocol import BotHandshake, InitialPosition
from sacbot.settings import load_bot_environment


@dataclass(frozen=True)
class BotIdentity:
    """Everything a BotHandshake says about the bot (not the session id or the secret)."""

    name: str
    version: str
    authors: list[str]
    description: str | None = None
    homepage: str | None = None
    country_codes: list[str] = field(default_factory=list)
    game_types: list[str] = field(default_factory=list)
    platform: str | None = "Python"
    programming_lang: str | None = "Python 3"
    initial_position: InitialPosition | None = None
    team_id: int | None = None
    team_name: str | None = None
    team_version: str | None = None
    is_droid: bool = False

    def handshake(self, session_id: str, secret: str | None) -> BotHandshake:
        return BotHandshake(
            session_id=session_id,
            name=self.name,
            version=self.version,
            authors=list(self.authors),
            description=self.description,
            homepage=self.homepage,
            country_codes=list(self.country_codes) or None,
            game_types=list(self.game_types) or None,
            platform=self.platform,
            programming_lang=self.programming_lang,
            initial_position=self.initial_position,
            team_id=self.team_id,
            team_name=self.team_name,
            team_version=self.team_version,
            is_droid=self.is_droid,
            secret=secret,
        )


def parse_initial_position(text: str | None) -> InitialPosition | None:
    """ "x,y,direction" (any part may be blank), as in BOT_INITIAL_POS and the JSON's initialPosition."""
    if not text or not text.strip():
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) if p else None for p in parts[:3]] + [None] * (3 - min(len(parts), 3))
    except ValueError:
        raise UserError(f"bad initial position {text!r}: expected 'x,y,direction'", exit_code=2) from None
    return InitialPosition(x=values[0], y=values[1], direction=values[2])


def _from_mapping(data: Mapping[str, Any], source: str) -> BotIdentity:
    def text(key: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise UserError(f"{source}: '{key}' must be a string", exit_code=2)
        return value

    def strings(key: str) -> list[str]:
        value = data.get(key)
        if value is None:
            return []
        if isinstance(value, str):  # tolerated: "a, b" as the booter joins lists
            return [p.strip() for p in value.split(",") if p.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UserError(f"{source}: '{key}' must be a list of strings", exit_code=2)
        return [v for v in value if v.strip()]

    name, version, authors = text("name"), text("version"), strings("authors")
    missing = [
        k
        for k, v in (("name", name), ("version", version), ("authors", authors))
        if not v or not str(v).strip()
    ]
    if missing:
        raise UserError(f"{source}: bot identity lacks {', '.join(missing)}", exit_code=2)
    assert name is not None and version is not None
    initial = data.get("initialPosition")
    return BotIdentity(
        name=name,
        version=version,
        authors=authors,
        description=text("description"),
        homepage=text("homepage"),
        country_codes=strings("countryCodes"),
        game_types=strings("gameTypes"),
        platform=text("platform") or "Python",
        programming_lang=text("programmingLang") or "Python 3",
        initial_position=parse_initial_position(initial) if isinstance(initial, str) else None,
    )


def load_identity_json(path: Path) -> BotIdentity:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"bot config {path} does not exist", exit_code=2) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"bot config {path} is not readable JSON: {exc}", exit_code=2) from None
    if not isinstance(data, dict):
        raise UserError(f"bot config {path}: expected a JSON object", exit_code=2)
    return _from_mapping(data, str(path))


def resolve_identity(
    explicit: BotIdentity | Mapping[str, Any] | None = None,
    json_path: Path | str | None = None,
) -> BotIdentity:
    """The identity from the first source that exists: `explicit`, then `json_path` (if that file exists;
    a missing file falls through, as the official libraries do with `<ClassName>.json`), then BOT_* variables.
    Team fields always come from TEAM_ID / TEAM_NAME / TEAM_VERSION. UserError when nothing complete is found.
    """
    env = load_bot_environment()
    if isinstance(explicit, BotIdentity):
        identity = explicit
    elif explicit is not None:
        identity = _from_mapping(explicit, "bot identity argument")
    elif json_path is not None and Path(json_path).is_file():
        identity = load_identity_json(Path(json_path))
    else:
        if not (env.bot_name and env.bot_version and env.bot_authors):
            where = f"{json_path} does not exist and " if json_path is not None else ""
            raise UserError(
                f"no bot identity: {where}BOT_NAME, BOT_VERSION and BOT_AUTHORS are not all set", exit_code=2
            )
        identity = BotIdentity(
            name=env.bot_name,
            version=env.bot_version,
            authors=list(env.bot_authors),
            description=env.bot_description,
            homepage=env.bot_homepage,
            country_codes=list(env.bot_country_codes),
            game_types=list(env.bot_game_types),
            platform=env.bot_platform or "Python",
            programming_lang=env.bot_prog_lang or "Python 3",
            initial_position=parse_initial_position(env.bot_initial_pos),
        )
    if env.team_id is not None or env.team_name or env.team_version:
        identity = replace(
            identity, team_id=env.team_id, team_name=env.team_name, team_version=env.team_version
        )
    return identity
