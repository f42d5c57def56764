"""Boot bot directories the way the official booter does (REFERENCE.md section 11), and stop them without
orphans.

A bot directory `<Dir>/` holds `<Dir>.json` (name, version, authors, ...; read by `sacbot.botinfo`) and
a launcher: `<Dir>.sh` (run with bash), else `<Dir>.py` (run with Python), else a file `<Dir>` or `<Dir>.*`
with a shebang. The process runs in the bot directory with SERVER_URL, SERVER_SECRET, BOT_BOOTED and the BOT_*
variables, in its own process group, so `stop` ends the launcher script and everything it started. Every live
`Booter` is stopped at interpreter exit too.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import time
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

from sacbot.botinfo import BotFile, bot_file_path, read_bot_file
from sacbot.errors import UserError

# With no `<Dir>.json` the official booter makes these up (the name is the folder's).
DEFAULT_VERSION = "0.0.1"
DEFAULT_AUTHORS = ("unknown",)


@dataclass(frozen=True)
class BotEntry:
    """A bot directory and its identity (its `<Dir>.json`, or the booter's defaults when that is absent)."""

    dir: Path
    info: BotFile

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def version(self) -> str:
        return self.info.version

    @property
    def authors(self) -> list[str]:
        return list(self.info.authors)

    @property
    def base(self) -> str:
        """The launchers' file name (`<base>.sh`, `<base>.py`, ...): the JSON's `base`, else the folder's."""
        return self.info.base or self.dir.name

    @property
    def team_members(self) -> list[str]:
        return list(self.info.team_members)


def read_bot_dir(path: str | os.PathLike[str]) -> BotEntry:
    d = Path(path).resolve()
    if not d.is_dir():
        raise UserError(f"not a bot directory: {path}", 2)
    if bot_file_path(d).exists():
        return BotEntry(d, read_bot_file(d))
    return BotEntry(d, BotFile(name=d.name, version=DEFAULT_VERSION, authors=list(DEFAULT_AUTHORS)))


def boot_env(
    entry: BotEntry,
    server_url: str,
    server_secret: str | None = None,
    team: tuple[int, str, str] | None = None,
    base_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment the official booter gives a bot (B/process/BotEnvironment.kt)."""
    env = dict(os.environ if base_env is None else base_env)
    for key in [k for k in env if k.startswith(("BOT_", "TEAM_")) or k in ("SERVER_URL", "SERVER_SECRET")]:
        del env[key]  # nothing inherited may impersonate the booted bot
    env["SERVER_URL"] = server_url
    if server_secret:
        env["SERVER_SECRET"] = server_secret
    env["BOT_BOOTED"] = "true"
    env["BOT_NAME"] = entry.name
    env["BOT_VERSION"] = entry.version
    env["BOT_AUTHORS"] = ", ".join(entry.authors)
    info = entry.info
    optional = {
        "BOT_GAME_TYPES": ", ".join(info.game_types),
        "BOT_DESCRIPTION": info.description,
        "BOT_HOMEPAGE": info.homepage,
        "BOT_COUNTRY_CODES": ", ".join(info.country_codes),
        "BOT_PLATFORM": info.platform,
        "BOT_PROG_LANG": info.programming_lang,
        "BOT_INITIAL_POS": info.initial_position,
    }
    env.update({var: value for var, value in optional.items() if value})
    if team is not None:
        env["TEAM_ID"], env["TEAM_NAME"], env["TEAM_VERSION"] = str(team[0]), team[1], team[2]
    # Our own bots' scripts run "${SACBOT_PYTHON:-python3}": point them at this interpreter unless told
    # otherwise.
    env.setdefault("SACBOT_PYTHON", sys.executable)
    return env


def launch_command(entry: BotEntry, python: str | None = None) -> list[str]:
    """The command for a bot directory, in the official booter's search order for Unix."""
    d, base = entry.dir, entry.base
    sh = d / f"{base}.sh"
    if sh.is_file():
        return ["bash", str(sh)]
    py = d / f"{base}.py"
    if py.is_file():
        return [python or sys.executable, str(py)]
    for cand in sorted(d.glob(f"{base}*")):
        if cand.is_file() and (cand.name == base or cand.name.startswith(base + ".")):
            try:
                with cand.open("rb") as f:
                    if f.read(2) == b"#!":
                        return [str(cand)]
            except OSError:
                continue
    raise UserError(f"{d}: no launcher found ({base}.sh, {base}.py or a script with a shebang)", 2)


@dataclass
class BootedBot:
    entry: BotEntry
    process: subprocess.Popen[bytes]
    log_path: Path | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def exit_code(self) -> int | None:
        return self.process.poll()

    def note(self, line: str) -> None:
        """Append one line of the booter's own to the bot's log (what happened to the process)."""
        if self.log_path is None:
            return
        try:
            with self.log_path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
        except OSError:
            pass

    def log_tail(self, lines: int = 5) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])


_LIVE: weakref.WeakSet[Booter] = weakref.WeakSet()
# How long a bot may take to exit after SIGTERM before its group gets SIGKILL. A learning bot saves its last
# round on the way out, which on a loaded machine or a slow disk can take seconds; a bot that exits at once
# costs no wait.
STOP_TIMEOUT_S = 10.0


class Booter:
    """Starts bot processes for one server and stops them all (also at interpreter exit)."""

    def __init__(
        self,
        server_url: str,
        server_secret: str | None = None,
        *,
        log_dir: str | Path | None = None,
        python: str | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.server_url = server_url
        self.server_secret = server_secret
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.python = python
        self.extra_env = dict(extra_env or {})
        self.bots: list[BootedBot] = []
        self._teams = 0
        _LIVE.add(self)

    def boot(self, bot_dir: str | os.PathLike[str]) -> list[BootedBot]:
        """Start one bot directory (a team directory starts every member) and return its processes."""
        entry = read_bot_dir(bot_dir)
        if entry.team_members:
            self._teams += 1
            team = (self._teams, entry.name, entry.version)
            return [self._start(read_bot_dir(entry.dir.parent / m), team) for m in entry.team_members]
        return [self._start(entry, None)]

    def boot_all(self, dirs: Iterable[str | os.PathLike[str]]) -> list[BootedBot]:
        started: list[BootedBot] = []
        for d in dirs:
            started.extend(self.boot(d))
        return started

    def _start(self, entry: BotEntry, team: tuple[int, str, str] | None) -> BootedBot:
        cmd = launch_command(entry, self.python)
        env = boot_env(entry, self.server_url, self.server_secret, team)
        env.update(self.extra_env)
        log_path: Path | None = None
        out: IO[bytes] | int = subprocess.DEVNULL
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log_path = self.log_dir / f"{entry.base}-{len(self.bots) + 1}.log"
            out = log_path.open("wb")
        try:
            # Own session and process group: Ctrl-C in the terminal does not hit the bots half-way, and
            # `stop` can end the launcher script together with whatever it started.
            proc = subprocess.Popen(
                cmd,
                cwd=entry.dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT if log_path else subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            raise UserError(f"cannot start {entry.dir}: {exc}", 2) from None
        finally:
            if not isinstance(out, int):
                out.close()
        bot = BootedBot(entry, proc, log_path)
        self.bots.append(bot)
        return bot

    def stop(self, bot: BootedBot, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM the bot's process group, then SIGKILL what is left after `timeout` seconds."""
        _signal_group(bot.pid, signal.SIGTERM)
        try:
            bot.process.wait(timeout)
        except subprocess.TimeoutExpired:
            bot.note(f"booter: still running {timeout:g} s after SIGTERM; killed (SIGKILL)")
        # Children of the launcher may outlive it: the group is killed either way.
        _signal_group(bot.pid, signal.SIGKILL)
        try:
            bot.process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        if bot in self.bots:
            self.bots.remove(bot)

    def stop_all(self, timeout: float = STOP_TIMEOUT_S) -> None:
        bots = list(self.bots)
        for bot in bots:
            _signal_group(bot.pid, signal.SIGTERM)
        end = time.monotonic() + timeout
        for bot in bots:
            try:
                bot.process.wait(max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for bot in bots:
            self.stop(bot, timeout)

    def __enter__(self) -> Booter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_all()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


@atexit.register
def _stop_everything() -> None:
    for booter in list(_LIVE):
        booter.stop_all(1.0)
