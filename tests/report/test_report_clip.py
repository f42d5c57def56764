"""`sacbot report` of a campaign run that recorded its evals (`[record]`): a short GIF of the latest eval
game, linked from report.md; none without recordings, and a damaged recording is a note, not a failure."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image

from sacbot.report.writer import CLIP_FRAMES, CLIP_GIF, CLIP_WIDTH, write_report
from sacbot.rundir import RunPaths

from ..viewer.viewer_support import Played


@pytest.fixture(scope="module")
def recorded_run(
    tmp_path_factory: pytest.TempPathFactory,
    build_run: Callable[[Path], Path],
    record_game: Callable[..., Played],
) -> Path:
    run = build_run(tmp_path_factory.mktemp("run") / "rec")
    recordings = RunPaths(run).recordings
    older = record_game(tmp_path_factory.mktemp("g1"), ("Corners", "Fire"), rounds=1, seed=3).path
    newer = record_game(tmp_path_factory.mktemp("g2"), ("SpinBot", "Walls"), rounds=2, seed=5).path
    recordings.mkdir()
    shutil.copy(older, recordings / "game-2026-12-01-10-00-00-eval-00002-Fire.battle.gz")
    shutil.copy(newer, recordings / "game-2026-12-01-10-05-00-eval-00003-Walls.battle.gz")
    shutil.copy(older, recordings / "game-2026-12-01-10-06-00-chunk-00004-a1.battle.gz")  # not an eval
    for n, name in enumerate(sorted(p.name for p in recordings.iterdir())):
        os.utime(recordings / name, (1_700_000_000 + n, 1_700_000_000 + n))
    return run


def test_the_report_shows_the_latest_eval_game(recorded_run: Path, tmp_path: Path) -> None:
    outcome = write_report(recorded_run, tmp_path / "rep")
    clip = tmp_path / "rep" / CLIP_GIF
    assert clip in outcome.files
    with Image.open(clip) as image:
        assert image.format == "GIF"
        assert image.size[0] == CLIP_WIDTH and image.size[1] < CLIP_WIDTH
        assert 2 <= getattr(image, "n_frames", 1) <= CLIP_FRAMES
    assert clip.stat().st_size < 1_000_000
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Latest recorded eval game" in text
    assert f"![The latest recorded eval game]({CLIP_GIF})" in text
    latest = RunPaths(recorded_run).recordings / "game-2026-12-01-10-05-00-eval-00003-Walls.battle.gz"
    assert "Round 1, turns 1-" in text and f"`sacbot replay {latest}`" in text


def test_no_recordings_no_clip_and_a_damaged_one_is_a_note(
    tmp_path: Path, build_run: Callable[[Path], Path]
) -> None:
    run = build_run(tmp_path / "run")
    outcome = write_report(run, tmp_path / "rep")
    assert not (tmp_path / "rep" / CLIP_GIF).exists()
    assert "Latest recorded eval game" not in (tmp_path / "rep" / "report.md").read_text()
    assert not any("clip" in note for note in outcome.notes)

    RunPaths(run).recordings.mkdir()
    (RunPaths(run).recordings / "game-2026-12-01-10-00-00-eval-00003-Walls.battle.gz").write_bytes(b"junk\n")
    outcome = write_report(run, tmp_path / "rep2")
    assert not (tmp_path / "rep2" / CLIP_GIF).exists()
    (note,) = [n for n in outcome.notes if "clip" in n]
    assert "No clip of the latest eval game" in note and "not JSON" in note
