"""Battle recordings of a campaign's games (`[record]`), of `sacbot eval --record` and of `sacbot tournament
--record`: the files are written where asked, read back, and `keep_last` deletes the oldest."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sacbot.campaign.config import parse_campaign
from sacbot.campaign.runner import ArenaBackend
from sacbot.checkpoint import CheckpointMeta, save_checkpoint
from sacbot.errors import UserError
from sacbot.rundir import RunPaths
from sacbot.viewer.reader import read_recording
from sacbot.viewer.recording import (
    SelectedGames,
    prune_recordings,
    recordings_in,
)

REPO = Path(__file__).resolve().parents[2]
OPPONENT = "TrackFire"  # kills an untrained SacBot within a few hundred turns: short games
BASE = {"name": "rec", "chunks": {"rounds": 1, "budget": 1}, "opponents": {"SpinBot": 1}}
TICK = (
    '{"type":"TickEventForObserver","roundNumber":1,"turnNumber":1,"botStates":[],"bulletStates":[],'
    '"events":[]}'
)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig

    path = tmp_path_factory.mktemp("ckpt") / "fresh.zip"
    sac = SacTrainer(TrainerConfig(seed=11, device="cpu", replay_capacity=64))
    save_checkpoint(path, sac.state_arrays(), CheckpointMeta(network_sizes=sac.network_sizes()))
    return path


def quiet_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SACBOT_", "BOT_", "SERVER_"))}


def test_the_record_table_parses_and_refuses_bad_values() -> None:
    assert parse_campaign(BASE).record is None
    rec = parse_campaign({**BASE, "record": {}}).record
    assert rec is not None and rec.kinds() == ("eval",) and rec.keep_last == 20
    rec = parse_campaign({**BASE, "record": {"games": "all", "keep_last": 0}}).record
    assert rec is not None and rec.kinds() == ("eval", "chunk") and rec.keep_last == 0
    with pytest.raises(UserError, match=r"record\.games: Input should be 'evals', 'chunks' or 'all'") as err:
        parse_campaign({**BASE, "record": {"games": "some"}})
    assert err.value.exit_code == 2
    with pytest.raises(UserError, match=r"record\.keep_last: Input should be greater than or equal to 0"):
        parse_campaign({**BASE, "record": {"keep_last": -1}})
    with pytest.raises(UserError, match=r"record: the embedded arena records games"):
        parse_campaign({**BASE, "record": {}, "server": {"url": "ws://127.0.0.1:1"}})


def test_only_armed_games_of_selected_kinds_are_recorded_and_keep_last_prunes(tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    recorder = SelectedGames.open(folder, ("eval",), keep_last=2)

    def game(kind: str, label: str) -> None:
        recorder.arm(kind, label)
        recorder.start_game()
        recorder.record(TICK.encode())
        recorder.end_game()
        recorder.settle()

    game("chunk", "chunk-00001-a1")  # not selected: no file
    assert recordings_in(folder) == []
    for chunk in (1, 2, 3):
        game("eval", f"eval-{chunk:05d}-SpinBot")
    recorder.start_game()  # a game nobody armed for (settle disarmed the last one): not recorded
    recorder.record(TICK.encode())
    recorder.end_game()
    recorder.close()
    names = [p.name for p in recordings_in(folder)]
    assert len(names) == 2, names
    assert names[0].endswith("-eval-00002-SpinBot.battle.gz") and names[1].endswith(
        "-eval-00003-SpinBot.battle.gz"
    )
    assert all(n.startswith("game-") for n in names)
    assert read_recording(folder / names[1]).lines == [TICK]
    assert prune_recordings(folder, 0) == []  # 0 keeps everything
    assert [p.name for p in prune_recordings(folder, 1)] == names[:1]


def test_a_campaign_records_its_eval_games_into_the_run_folder(tmp_path: Path, checkpoint: Path) -> None:
    campaign = parse_campaign(
        {**BASE, "eval": {"rounds": 1, "opponents": [OPPONENT]}, "record": {"keep_last": 2}}
    )
    paths = RunPaths(tmp_path / "run")
    # Two older recordings already there: after the game only the newest two of the three stay.
    paths.recordings.mkdir(parents=True)
    for n, age in ((1, 300), (2, 200)):
        old = paths.recordings / f"game-2026-01-01-00-00-0{n}-eval-0000{n}-{OPPONENT}.battle.gz"
        old.write_bytes(gzip.compress((TICK + "\n").encode()))
        os.utime(old, (old.stat().st_atime - age, old.stat().st_mtime - age))
    rec = campaign.record
    assert rec is not None
    backend = ArenaBackend(campaign, paths, SelectedGames.open(paths.recordings, rec.kinds(), rec.keep_last))
    candidate = paths.candidate(3)
    candidate.parent.mkdir(parents=True)
    candidate.write_bytes(checkpoint.read_bytes())
    try:
        score = backend.run_eval(candidate, OPPONENT, 1, lambda event: None)
    finally:
        backend.close()
    assert score.rounds == 1
    files = recordings_in(paths.recordings)
    assert [p.name.endswith(f"-eval-00002-{OPPONENT}.battle.gz") for p in files] == [True, False]
    newest = files[-1]
    assert newest.name.startswith("game-") and newest.name.endswith(f"-eval-00003-{OPPONENT}.battle.gz")
    recording = read_recording(newest)
    kinds = [m["type"] for m in recording.messages()]
    assert kinds[0] == "GameStartedEventForObserver" and kinds[-1] == "GameEndedEventForObserver"
    assert not recording.truncated


def test_eval_record_writes_a_readable_recording_per_opponent(tmp_path: Path, checkpoint: Path) -> None:
    out = tmp_path / "recs"
    result = subprocess.run(
        [sys.executable, "-m", "sacbot", "eval", "--checkpoint", str(checkpoint), "--opponents", OPPONENT]
        + ["--rounds", "1", "--json", "--record", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        env=quiet_env(),
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    (path,) = recordings_in(out)
    assert path.name.endswith(f"-eval-{OPPONENT}.battle.gz")
    recording = read_recording(path)
    started = recording.messages()[0]
    assert started["type"] == "GameStartedEventForObserver"
    participants = started["participants"]
    assert isinstance(participants, list)
    assert {p["name"] for p in participants} == {"SacBot", OPPONENT}
    assert not recording.truncated


def test_record_folders_that_cannot_be_written_are_one_line(tmp_path: Path, checkpoint: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for args in (
        ["eval", "--checkpoint", str(checkpoint), "--opponents", OPPONENT, "--record", str(blocker / "d")],
        [
            "tournament",
            str(REPO / "bots" / "SpinBot"),
            str(REPO / "bots" / "Walls"),
            "--record",
            str(blocker),
        ],
    ):
        result = subprocess.run(
            [sys.executable, "-m", "sacbot", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=quiet_env(),
            cwd=tmp_path,
        )
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert "--record: cannot write to" in result.stderr


def test_tournament_record_writes_one_recording_per_pair(tmp_path: Path) -> None:
    import functools

    from sacbot.campaign.tournament import run_tournament
    from sacbot.viewer.recording import game_recorder

    out = tmp_path / "recs"
    bots = [REPO / "bots" / "SpinBot", REPO / "bots" / "Walls"]
    run_tournament(
        bots,
        1,
        out=tmp_path / "t",
        workers=1,
        seed=3,
        recorder_factory=functools.partial(game_recorder, str(out)),
    )
    (path,) = recordings_in(out)
    assert path.name.endswith("-SpinBot-vs-Walls.battle.gz")
    assert read_recording(path).messages()[-1]["type"] == "GameEndedEventForObserver"
