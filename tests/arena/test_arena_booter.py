"""The booter starts bot directories like the official booter (cwd, environment, launcher order) and stops
them, children included, leaving no orphans."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sacbot.arena.booter import Booter, launch_command, read_bot_dir
from sacbot.errors import UserError

# A launcher that records its environment, then ignores SIGTERM and starts a child that ignores it too (the
# ignore is inherited), so only the booter's SIGKILL of the whole group ends them.
SPY_SH = """#!/bin/bash
python3 - <<'EOF'
import json, os
keep = {k: v for k, v in os.environ.items()
        if k.startswith(("BOT_", "SERVER_", "TEAM_")) or k == "SACBOT_PYTHON"}
json.dump({"env": keep, "cwd": os.getcwd()}, open("env.tmp", "w"))
os.replace("env.tmp", "env.json")
EOF
trap '' TERM
sleep 300 &
echo $! > child.pid
wait
"""


def has_text(path: Path) -> bool:
    """True once a shell script's one-line write is complete (the line's newline is there)."""
    try:
        return path.read_text().endswith("\n")
    except OSError:
        return False


def test_boot_passes_the_official_environment_and_stop_leaves_no_orphans(
    tmp_path: Path,
    make_bot_dir: Callable[..., Path],
    wait_for: Callable[[Callable[[], object], float, str], None],
    pid_alive: Callable[[int], bool],
) -> None:
    d = make_bot_dir(
        tmp_path,
        "Spy",
        sh=SPY_SH,
        info={"description": "spies", "countryCodes": ["nl", "dk"], "authors": ["Ann", "Bob"]},
    )
    with Booter("ws://127.0.0.1:5555", "s3cret", log_dir=tmp_path / "logs") as booter:
        (bot,) = booter.boot(d)
        # The shell creates child.pid before it writes the pid: wait for the number, not the file.
        wait_for(lambda: (d / "env.json").exists() and has_text(d / "child.pid"), 20, "the launcher")
        seen = json.loads((d / "env.json").read_text())
        child = int((d / "child.pid").read_text())
        assert pid_alive(bot.pid) and pid_alive(child)
        booter.stop(bot, timeout=1.0)  # the script ignores SIGTERM: the group gets SIGKILL
        wait_for(lambda: not pid_alive(child), 5, "the launcher's child to end")
        assert not pid_alive(bot.pid)
        assert "still running 1 s after SIGTERM; killed (SIGKILL)" in bot.log_tail(), "the log says why"
    assert seen["cwd"] == str(d)
    env = seen["env"]
    assert env["SERVER_URL"] == "ws://127.0.0.1:5555" and env["SERVER_SECRET"] == "s3cret"
    assert env["BOT_BOOTED"] == "true" and env["BOT_NAME"] == "Spy" and env["BOT_VERSION"] == "1.0"
    assert env["BOT_AUTHORS"] == "Ann, Bob" and env["BOT_COUNTRY_CODES"] == "nl, dk"
    assert env["BOT_DESCRIPTION"] == "spies" and env["BOT_GAME_TYPES"] == "1v1, classic"
    assert env["BOT_PLATFORM"] == "Python" and env["SACBOT_PYTHON"]


def test_launcher_order_and_defaults(tmp_path: Path, make_bot_dir: Callable[..., Path]) -> None:
    both = make_bot_dir(tmp_path, "Both", sh="exit 0\n", py="print()\n")
    assert launch_command(read_bot_dir(both))[0] == "bash"
    py_only = make_bot_dir(tmp_path, "PyOnly", py="print()\n")
    assert launch_command(read_bot_dir(py_only)) == [sys.executable, str(py_only / "PyOnly.py")]
    bare = tmp_path / "Bare"
    bare.mkdir()
    (bare / "Bare").write_text("#!/bin/sh\n")
    entry = read_bot_dir(bare)  # no JSON: the official booter's defaults
    assert (entry.name, entry.version, entry.authors) == ("Bare", "0.0.1", ["unknown"])
    assert launch_command(entry) == [str(bare / "Bare")]
    empty = tmp_path / "Empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no launcher"):
        launch_command(read_bot_dir(empty))
    (tmp_path / "Broken").mkdir()
    (tmp_path / "Broken" / "Broken.json").write_text("{not json")
    with pytest.raises(UserError, match="Broken.json"):
        read_bot_dir(tmp_path / "Broken")


def test_ctrl_c_on_a_booting_program_stops_every_bot(
    tmp_path: Path,
    make_bot_dir: Callable[..., Path],
    wait_for: Callable[[Callable[[], object], float, str], None],
    pid_alive: Callable[[int], bool],
) -> None:
    d = make_bot_dir(tmp_path, "Sleeper", sh="sleep 300 &\necho $! > child.pid\nwait\n")
    script = tmp_path / "boot.py"
    script.write_text(
        "import sys, time\n"
        "from sacbot.arena.booter import Booter\n"
        f"b = Booter('ws://127.0.0.1:1')\nb.boot({str(d)!r})\n"
        "print('booted', flush=True)\n"
        "time.sleep(300)\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "booted"
        pid_file = d / "child.pid"
        # The shell creates the file before it writes the pid: wait for the number, not the file.
        wait_for(lambda: has_text(pid_file), 20, "the bot")
        child = int(pid_file.read_text())
        assert pid_alive(child)
        proc.send_signal(signal.SIGINT)  # Ctrl-C: KeyboardInterrupt, then the booter's exit hook
        proc.wait(20)
        wait_for(lambda: not pid_alive(child), 10, "the bot's child to end")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_team_directory_boots_each_member_with_team_variables(
    tmp_path: Path,
    make_bot_dir: Callable[..., Path],
    wait_for: Callable[[Callable[[], object], float, str], None],
    pid_alive: Callable[[int], bool],
) -> None:
    spy = '#!/bin/bash\necho "$TEAM_ID $TEAM_NAME $TEAM_VERSION $BOT_NAME" > team.txt\nsleep 300\n'
    for name in ("M1", "M2"):
        make_bot_dir(tmp_path, name, sh=spy)
    team = make_bot_dir(tmp_path, "Squad", info={"teamMembers": ["M1", "M2"], "version": "2.0"})
    with Booter("ws://127.0.0.1:1") as booter:
        bots = booter.boot(team)
        assert [b.entry.name for b in bots] == ["M1", "M2"]
        wait_for(lambda: all(has_text(tmp_path / m / "team.txt") for m in ("M1", "M2")), 20, "members")
        lines = [(tmp_path / m / "team.txt").read_text().strip() for m in ("M1", "M2")]
        pids = [b.pid for b in bots]
    assert lines == ["1 Squad 2.0 M1", "1 Squad 2.0 M2"]
    deadline = time.monotonic() + 5
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(p) for p in pids)
