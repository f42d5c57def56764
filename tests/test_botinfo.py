"""The one reader of a bot folder's `<Name>.json` (real files in tmp_path) and its users."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sacbot.arena.booter import boot_env, read_bot_dir
from sacbot.botinfo import BotFile, read_bot_file
from sacbot.client import resolve_identity
from sacbot.errors import UserError


def bot_folder(root: Path, name: str, content: object | str) -> Path:
    folder = root / name
    folder.mkdir()
    text = content if isinstance(content, str) else json.dumps(content)
    (folder / f"{name}.json").write_text(text, encoding="utf-8")
    return folder


def error_line(path: Path) -> str:
    with pytest.raises(UserError) as info:
        read_bot_file(path)
    assert info.value.exit_code == 2
    text = str(info.value)
    assert "\n" not in text
    return text


def test_a_good_file_reads_every_field(tmp_path: Path) -> None:
    folder = bot_folder(
        tmp_path,
        "Good",
        {
            "name": " Good ",
            "version": "1.2",
            "authors": ["Ann", " Bob "],
            "description": "a bot",
            "homepage": "https://example.org",
            "countryCodes": ["dk"],
            "gameTypes": ["1v1", "classic"],
            "platform": "Python",
            "programmingLang": "Python 3",
            "initialPosition": "50,, 90",
            "base": "start",
            "license": "MIT",
            "teamMembers": ["A", "B"],
            "somethingElse": {"ignored": True},
        },
    )
    info = read_bot_file(folder)
    assert info == read_bot_file(folder / "Good.json")  # the folder or the file itself
    assert (info.name, info.version, info.authors) == ("Good", "1.2", ["Ann", "Bob"])
    assert (info.description, info.homepage, info.country_codes) == ("a bot", "https://example.org", ["dk"])
    assert (info.game_types, info.platform, info.programming_lang) == (
        ["1v1", "classic"],
        "Python",
        "Python 3",
    )
    assert (info.initial_position, info.base, info.license) == ("50,, 90", "start", "MIT")
    assert info.team_members == ["A", "B"]
    assert "somethingElse" not in info.to_json() and info.to_json()["gameTypes"] == ["1v1", "classic"]
    assert BotFile.model_validate(info.to_json()) == info


def test_list_fields_take_a_list_or_a_comma_separated_string(tmp_path: Path) -> None:
    as_text = bot_folder(
        tmp_path,
        "Text",
        {
            "name": "Text",
            "version": "1",
            "authors": "Ann, Bob,",
            "gameTypes": "1v1,classic",
            "countryCodes": "dk",
        },
    )
    as_list = bot_folder(
        tmp_path,
        "List",
        {"name": "List", "version": "1", "authors": ["Ann", "Bob", " "], "gameTypes": ["1v1", "classic"]},
    )
    for folder in (as_text, as_list):
        info = read_bot_file(folder)
        assert info.authors == ["Ann", "Bob"] and info.game_types == ["1v1", "classic"]
    assert read_bot_file(as_text).country_codes == ["dk"] and read_bot_file(as_list).country_codes == []


def test_a_missing_required_field_is_one_line_naming_it(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "Half", {"name": "Half", "authors": []})
    line = error_line(folder)
    assert "Half.json" in line and "version: missing" in line and "authors" in line
    blank = bot_folder(tmp_path, "Blank", {"name": "  ", "version": "1", "authors": ["x"]})
    assert "name: must not be blank" in error_line(blank)


def test_a_wrong_type_names_the_field(tmp_path: Path) -> None:
    folder = bot_folder(
        tmp_path,
        "Odd",
        {"name": "Odd", "version": 2, "authors": ["x"], "gameTypes": 5, "initialPosition": "a,b"},
    )
    line = error_line(folder)
    assert "Odd.json" in line and "version: Input should be a valid string" in line
    assert "gameTypes: must be a list of strings or one comma-separated string" in line
    assert "initialPosition: bad initial position 'a,b'" in line


def test_bad_json_is_one_line(tmp_path: Path) -> None:
    line = error_line(bot_folder(tmp_path, "Broken", "{not json"))
    assert "Broken.json" in line and "not valid JSON" in line


def test_not_an_object_is_one_line(tmp_path: Path) -> None:
    line = error_line(bot_folder(tmp_path, "Listy", ["name", "version"]))
    assert "Listy.json" in line and "expected a JSON object, got list" in line


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "Empty").mkdir()
    line = error_line(tmp_path / "Empty")
    assert "Empty.json" in line and "does not exist" in line


def test_the_booter_and_the_client_read_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("BOT_NAME", "BOT_VERSION", "BOT_AUTHORS", "TEAM_ID", "TEAM_NAME", "TEAM_VERSION"):
        monkeypatch.delenv(key, raising=False)
    folder = bot_folder(
        tmp_path,
        "Both",
        {
            "name": "Both",
            "version": "3",
            "authors": "Ann, Bob",
            "gameTypes": "melee",
            "initialPosition": "1,2,3",
        },
    )
    entry = read_bot_dir(folder)
    env = boot_env(entry, "ws://127.0.0.1:1", base_env={})
    assert env["BOT_AUTHORS"] == "Ann, Bob" and env["BOT_GAME_TYPES"] == "melee"
    assert env["BOT_INITIAL_POS"] == "1,2,3" and "BOT_PLATFORM" not in env
    identity = resolve_identity(json_path=folder / "Both.json")
    assert (identity.name, identity.authors, identity.game_types) == ("Both", ["Ann", "Bob"], ["melee"])
    assert identity.initial_position is not None and identity.initial_position.direction == 3.0
    assert identity.platform == "Python"  # the client's default when the file names none
