"""The CLI skeleton: every command listed, version, one-line errors, bad settings."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sacbot import __version__
from sacbot.errors import UserError
from sacbot.settings import load_bot_environment, load_sacbot_settings


def sacbot(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args], capture_output=True, text=True, env=full_env, timeout=60
    )


def test_help_lists_every_command() -> None:
    result = sacbot("--help")
    assert result.returncode == 0
    for command in ("play", "train-campaign", "eval", "make-twin", "checkpoint", "arena", "bench"):
        assert command in result.stdout


def test_version() -> None:
    result = sacbot("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"sacbot {__version__}"


def test_usage_error_is_one_line_not_a_traceback() -> None:
    result = sacbot("no-such-command")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_tank_royale_env_reads_booter_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVER_URL", "ws://127.0.0.1:9999")
    monkeypatch.setenv("BOT_NAME", "SacBot")
    monkeypatch.setenv("BOT_AUTHORS", "Ann,  Bob")
    monkeypatch.setenv("BOT_BOOTED", "true")
    env = load_bot_environment()
    assert env.server_url == "ws://127.0.0.1:9999"
    assert env.bot_name == "SacBot"
    assert env.bot_authors == ["Ann", "Bob"]
    assert env.bot_booted is True


def test_bad_setting_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SACBOT_RADAR_MODE", "sideways")
    with pytest.raises(UserError) as info:
        load_sacbot_settings()
    assert "SACBOT_RADAR_MODE" in str(info.value)
    assert info.value.exit_code == 2


def test_bad_server_url_is_one_line_exit_2() -> None:
    result = sacbot("play", env={"SERVER_URL": "http://nope"})
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "SERVER_URL" in result.stderr
