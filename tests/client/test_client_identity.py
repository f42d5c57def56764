"""Bot identity resolution: explicit argument, then <Name>.json, then BOT_* variables; team from TEAM_*."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sacbot.client import BotIdentity, resolve_identity
from sacbot.errors import UserError

ENV_KEYS = [
    "BOT_NAME",
    "BOT_VERSION",
    "BOT_AUTHORS",
    "BOT_GAME_TYPES",
    "BOT_INITIAL_POS",
    "TEAM_ID",
    "TEAM_NAME",
]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ENV_KEYS + ["TEAM_VERSION", "BOT_DESCRIPTION", "BOT_PLATFORM", "BOT_PROG_LANG"]:
        monkeypatch.delenv(key, raising=False)


def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_NAME", "EnvBot")
    monkeypatch.setenv("BOT_VERSION", "2.0")
    monkeypatch.setenv("BOT_AUTHORS", "Ann, Bob")
    monkeypatch.setenv("BOT_GAME_TYPES", "1v1,classic")
    monkeypatch.setenv("BOT_INITIAL_POS", "50, 60,")


def _json(tmp_path: Path) -> Path:
    path = tmp_path / "FileBot.json"
    path.write_text(
        json.dumps({"name": "FileBot", "version": "3.0", "authors": ["Cy"], "gameTypes": ["melee"]})
    )
    return path


def test_explicit_argument_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _env(monkeypatch)
    explicit = BotIdentity(name="ArgBot", version="1", authors=["Me"])
    assert resolve_identity(explicit, _json(tmp_path)).name == "ArgBot"
    assert resolve_identity({"name": "MapBot", "version": "1", "authors": ["Me"]}).name == "MapBot"


def test_json_file_comes_before_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _env(monkeypatch)
    identity = resolve_identity(json_path=_json(tmp_path))
    assert (identity.name, identity.version, identity.authors, identity.game_types) == (
        "FileBot",
        "3.0",
        ["Cy"],
        ["melee"],
    )


def test_environment_is_the_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _env(monkeypatch)
    monkeypatch.setenv("TEAM_ID", "4")
    monkeypatch.setenv("TEAM_NAME", "Bees")
    identity = resolve_identity(json_path=tmp_path / "Missing.json")
    assert (identity.name, identity.version, identity.authors) == ("EnvBot", "2.0", ["Ann", "Bob"])
    assert identity.game_types == ["1v1", "classic"]
    assert identity.initial_position is not None and identity.initial_position.x == 50.0
    assert identity.initial_position.direction is None
    assert (identity.team_id, identity.team_name) == (4, "Bees")
    hs = identity.handshake("sid", None)
    assert hs.team_id == 4 and hs.secret is None and hs.authors == ["Ann", "Bob"]


def test_missing_identity_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError) as info:
        resolve_identity(json_path=tmp_path / "Nope.json")
    assert "BOT_NAME" in str(info.value) and info.value.exit_code == 2


def test_incomplete_or_broken_json_names_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "Half.json"
    path.write_text(json.dumps({"name": "Half", "authors": []}))
    with pytest.raises(UserError) as info:
        resolve_identity(json_path=path)
    assert "version" in str(info.value) and "authors" in str(info.value)
    path.write_text("{not json")
    with pytest.raises(UserError) as info:
        resolve_identity(json_path=path)
    assert "Half.json" in str(info.value)
