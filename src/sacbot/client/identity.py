"""The bot's identity for its BotHandshake, resolved in the official libraries' order.

1. an explicit argument (a `BotIdentity`, or a mapping in the JSON file's camelCase keys);
2. a `<Name>.json` bot config file, read by `sacbot.botinfo` (name, version, authors required);
3. the `BOT_*` variables the booter passes (BOT_NAME, BOT_VERSION, BOT_AUTHORS, ...).
The team fields always come from TEAM_ID, TEAM_NAME, TEAM_VERSION, as in the official libraries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sacbot.botinfo import BotFile, parse_bot_info, parse_position, read_bot_file
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
    try:
        position = parse_position(text or "")
    except ValueError as exc:
        raise UserError(str(exc), exit_code=2) from None
    if position is None:
        return None
    return InitialPosition(x=position[0], y=position[1], direction=position[2])


def identity_from_file(info: BotFile) -> BotIdentity:
    """The identity a `<Name>.json` gives (platform and language default to Python's)."""
    return BotIdentity(
        name=info.name,
        version=info.version,
        authors=list(info.authors),
        description=info.description,
        homepage=info.homepage,
        country_codes=list(info.country_codes),
        game_types=list(info.game_types),
        platform=info.platform or "Python",
        programming_lang=info.programming_lang or "Python 3",
        initial_position=parse_initial_position(info.initial_position),
    )


def load_identity_json(path: Path) -> BotIdentity:
    return identity_from_file(read_bot_file(path))


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
        identity = identity_from_file(parse_bot_info(dict(explicit), "bot identity argument"))
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
