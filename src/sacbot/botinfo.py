"""A bot folder's `<Name>.json` (the official `BotInfo` file, plus the booter's keys): one model, one reader.

The booter (`sacbot.arena.booter`), the bot's own identity (`sacbot.client.identity`) and `sacbot make-twin`
all read the file through `read_bot_file`. The rules are the official Bot API's (`BotInfo.from_file`) and the
booter's (`B/model/BootEntry.kt`, REFERENCE.md section 11):

- `name`, `version` and `authors` are required; text is stripped, and blank text counts as missing;
- `authors`, `countryCodes` and `gameTypes` are a list of strings or one comma-separated string (the way the
  booter joins them into BOT_* variables); blank items are dropped;
- `description`, `homepage`, `platform`, `programmingLang` are optional text, `initialPosition` is optional
  "x,y,direction" text (any part may be blank);
- the booter's own keys: `base` (the launcher's file name, default the folder's name), `license` and
  `teamMembers` (sibling bot folders; its presence makes the folder a team);
- other keys are ignored; a value of the wrong type is an error that names its key.

A missing, unreadable or invalid file is a `UserError` of one line that names the file and every bad key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from sacbot.errors import UserError

Position = tuple[float | None, float | None, float | None]


def parse_position(text: str) -> Position | None:
    """ "x,y,direction" (any part may be blank; blank text is no position), as in the JSON's initialPosition
    and BOT_INITIAL_POS. ValueError on anything else."""
    if not text.strip():
        return None
    parts = [p.strip() for p in text.split(",")][:3]
    try:
        x, y, direction = [float(p) if p else None for p in parts] + [None] * (3 - len(parts))
    except ValueError:
        raise ValueError(f"bad initial position {text!r}: expected 'x,y,direction'") from None
    return x, y, direction


def _split_commas(value: object) -> object:
    # One string is a comma-separated list (as the booter joins lists and the official libraries split them).
    if isinstance(value, str):
        return value.split(",")
    if not isinstance(value, list):
        raise PydanticCustomError("string_list", "must be a list of strings or one comma-separated string")
    return value


def _stripped_items(values: list[str]) -> list[str]:
    return [v.strip() for v in values if v.strip()]


def _required_text(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be blank")
    return value.strip()


def _optional_text(value: str | None) -> str | None:
    return (value.strip() or None) if value is not None else None


def _at_least_one(values: list[str]) -> list[str]:
    if not values:
        raise PydanticCustomError("empty", "must name at least one")
    return values


def _position_text(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    try:
        parse_position(value)
    except ValueError as exc:
        raise PydanticCustomError("position", str(exc)) from None
    return value.strip()


RequiredText = Annotated[str, AfterValidator(_required_text)]
OptionalText = Annotated[str | None, AfterValidator(_optional_text)]
TextList = Annotated[list[str], BeforeValidator(_split_commas), AfterValidator(_stripped_items)]


class BotFile(BaseModel):
    """The contents of a bot folder's `<Name>.json` (camelCase keys in the file, snake_case here)."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="ignore", frozen=True
    )

    name: RequiredText
    version: RequiredText
    authors: Annotated[TextList, AfterValidator(_at_least_one)]
    description: OptionalText = None
    homepage: OptionalText = None
    country_codes: TextList = Field(default_factory=list)
    game_types: TextList = Field(default_factory=list)
    platform: OptionalText = None
    programming_lang: OptionalText = None
    initial_position: Annotated[str | None, AfterValidator(_position_text)] = None
    # The booter's own keys.
    base: OptionalText = None
    license: OptionalText = None
    team_members: TextList = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The file's JSON object: camelCase keys, without the keys left at their defaults."""
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def bot_file_path(path: str | os.PathLike[str]) -> Path:
    """The JSON file of a bot folder (`<Folder>/<Folder>.json`); a path that is not a folder is the file."""
    p = Path(path)
    return p / f"{p.name}.json" if p.is_dir() else p


def describe_errors(exc: ValidationError) -> str:
    """Every error of a validation as one line: `key: problem; key: problem`."""
    parts = []
    for err in exc.errors():
        key = ".".join(str(part) for part in err["loc"]) or "(top level)"
        parts.append(f"{key}: {'missing' if err['type'] == 'missing' else err['msg']}")
    return "; ".join(parts)


def parse_bot_info(data: Any, source: str) -> BotFile:
    """A `BotFile` from already-parsed JSON (`source` names it in the error)."""
    if not isinstance(data, dict):
        raise UserError(f"{source}: expected a JSON object, got {type(data).__name__}", exit_code=2)
    try:
        return BotFile.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"{source}: {describe_errors(exc)}", exit_code=2) from None


def read_bot_file(path: str | os.PathLike[str]) -> BotFile:
    """Read a bot folder's `<Folder>.json` (or the JSON file `path` names). UserError, one line naming the
    file (and each bad key), when it is missing, unreadable, not JSON or not a valid bot file."""
    file = bot_file_path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"bot config {file} does not exist", exit_code=2) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"bot config {file} is not readable: {exc}", exit_code=2) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"bot config {file} is not valid JSON: {exc}", exit_code=2) from None
    return parse_bot_info(data, f"bot config {file}")
