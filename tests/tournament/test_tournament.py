"""`sacbot tournament` as a user runs it: real games on the embedded arena (127.0.0.1) between real bot
processes from `bots/`, the JSONL it keeps, the heatmap, the ratings, resume, and its error lines; plus the
pure parts (pairing, per-round winners, the rating step, a torn JSONL line)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sacbot.campaign.tournament import run_tournament
from sacbot.campaign.tournament_pair import Bot, PairRecord, make_record, pairings, round_winners
from sacbot.campaign.tournament_ratings import matrices, rate
from sacbot.campaign.tournament_records import PAIRS_FILE, TournamentSpec, open_out_dir
from sacbot.errors import UserError

BOTS = Path(__file__).resolve().parents[2] / "bots"
DIRS = [str(BOTS / name) for name in ("Target", "SpinBot", "Walls")]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _sacbot(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sacbot", *args], capture_output=True, text=True, timeout=timeout
    )


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sacbot: error: "), proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One real tournament: 3 bots, 2 rounds a pair, two games at once."""
    out = tmp_path_factory.mktemp("tour") / "out"
    proc = _sacbot("tournament", *DIRS, "--rounds", "2", "--game-type", "1v1", "--json", "--out", str(out),
                   "--workers", "2")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(proc.stdout)


def test_round_robin_plays_every_pair_once_and_writes_its_files(played: tuple[Path, dict[str, Any]]) -> None:
    out, doc = played
    pairs = {(p["a"], p["b"]) for p in doc["pairs"]}
    assert pairs == {("SpinBot", "Target"), ("SpinBot", "Walls"), ("Target", "Walls")}
    assert {tuple(p) for p in doc["played"]} == pairs and doc["resumed"] == 0
    lines = (out / PAIRS_FILE).read_text().splitlines()
    assert len(lines) == 3
    for line in lines:
        rec = PairRecord.model_validate(json.loads(line))
        assert rec.rounds == 2 and rec.game_type == "1v1" and len(rec.round_winners) == 2
        assert rec.wins_a + rec.wins_b + rec.draws == 2
        assert rec.share_a == pytest.approx(1.0 - rec.share_b)
        assert {rec.name_a, rec.name_b} == {rec.a, rec.b}
    heatmap = Path(doc["paths"]["heatmap"])
    assert heatmap == out / "heatmap.png"
    data = heatmap.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000
    import matplotlib.image

    assert matplotlib.image.imread(heatmap).ndim == 3  # decodes as an image
    assert json.loads((out / "results.json").read_text()) == doc
    assert json.loads((out / "tournament.json").read_text())["bots"] == ["SpinBot", "Target", "Walls"]


def test_ratings_put_the_bot_that_never_fires_last(played: tuple[Path, dict[str, Any]]) -> None:
    _, doc = played
    ratings = doc["ratings"]
    order = [r["label"] for r in ratings]
    assert order[-1] == "Target" and order.index("SpinBot") < order.index("Target")
    by_label = {r["label"]: r for r in ratings}
    assert by_label["Target"]["wins"] == 0 and by_label["SpinBot"]["ordinal"] > by_label["Target"]["ordinal"]
    assert all(r["rounds"] == 4 for r in ratings)
    assert doc["win_rate"]["SpinBot"]["Target"] >= 0.5 and doc["win_rate"]["Target"]["SpinBot"] == 0.0
    assert doc["win_rate"]["Walls"]["Walls"] is None


def test_a_rerun_replays_only_the_missing_pair_and_refuses_another_tournament(
    played: tuple[Path, dict[str, Any]],
) -> None:
    out, _ = played
    path = out / PAIRS_FILE
    lines = path.read_text().splitlines(keepends=True)
    dropped = next(
        line for line in lines if (json.loads(line)["a"], json.loads(line)["b"]) == ("SpinBot", "Walls")
    )
    kept = [line for line in lines if line is not dropped]
    path.write_text("".join(kept))
    # Same bots in another order, the table form this time.
    proc = _sacbot("tournament", *reversed(DIRS), "--rounds", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "OpenSkill ratings" in proc.stdout and "resumed: 2" in proc.stdout
    assert "SpinBot vs Walls" in proc.stderr and "Target vs Walls:" not in proc.stderr  # the progress lines
    after = path.read_text().splitlines(keepends=True)
    assert after[:2] == kept and len(after) == 3
    assert (json.loads(after[2])["a"], json.loads(after[2])["b"]) == ("SpinBot", "Walls")
    results = json.loads((out / "results.json").read_text())
    assert results["played"] == [["SpinBot", "Walls"]] and results["resumed"] == 2
    # Nothing left to play: a third run plays nothing.
    again = _sacbot("tournament", *DIRS, "--rounds", "2", "--out", str(out), "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["played"] == []
    assert path.read_text().splitlines(keepends=True) == after
    # Another tournament in the same folder: one line, exit code 2, the folder untouched.
    for args in (["--rounds", "3"], ["--game-type", "classic", "--rounds", "2"]):
        other = _sacbot("tournament", *DIRS, *args, "--out", str(out))
        assert other.returncode == 2
        assert "holds another tournament" in _one_error_line(other)
    fewer = _sacbot("tournament", *DIRS[:2], "--rounds", "2", "--out", str(out))
    assert fewer.returncode == 2 and "holds another tournament" in _one_error_line(fewer)
    assert path.read_text().splitlines(keepends=True) == after


def test_bad_input_is_one_error_line(tmp_path: Path) -> None:
    missing = _sacbot("tournament", DIRS[0], str(tmp_path / "NoSuchBot"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 2 and "not a bot directory" in _one_error_line(missing)
    alone = _sacbot("tournament", DIRS[0], "--out", str(tmp_path / "o"))
    assert alone.returncode == 2 and "at least 2 bot directories" in _one_error_line(alone)
    assert not (tmp_path / "o").exists()
    for kwargs, words in (
        ({"rounds": 0}, "--rounds must be at least 1"),
        ({"rounds": 1, "workers": 0}, "--workers must be at least 1"),
        ({"rounds": 1, "game_type": "nope"}, "unknown game type"),
    ):
        with pytest.raises(UserError, match=words) as err:
            run_tournament(DIRS, out=tmp_path / "o", **kwargs)
        assert err.value.exit_code == 2
    with pytest.raises(UserError, match="named twice"):
        run_tournament([DIRS[0], DIRS[0]], 1, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


# ---- Pure parts --------------------------------------------------------------------------------------------


def _bot(label: str) -> Bot:
    return Bot(label=label, name=label, dir=f"/bots/{label}")


def test_pairings_are_every_unordered_pair_once_in_a_fixed_order() -> None:
    assert pairings(["C", "A", "B"]) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert pairings(["B", "A"]) == pairings(["A", "B", "A"]) == [("A", "B")]


def test_round_winners_follow_the_rise_of_the_last_survivor_bonus() -> None:
    rows = [{"A": 10.0, "B": 0.0}, {"A": 10.0, "B": 10.0}, {"A": 10.0, "B": 10.0}, {"A": 20.0, "B": 10.0}]
    assert round_winners(rows, "A", "B") == ["A", "B", None, "A"]


def test_ratings_are_the_same_for_the_same_results_in_any_order() -> None:
    a, b, c = _bot("A"), _bot("B"), _bot("C")
    records = [
        make_record(a, b, "1v1", ["A", "A", None], 300.0, 100.0),
        make_record(a, c, "1v1", ["C", "A", "C"], 150.0, 250.0),
        make_record(b, c, "1v1", ["C", "C", "C"], 0.0, 300.0),
    ]
    first = rate(["A", "B", "C"], records)
    for seed in range(3):
        shuffled = records[:]
        random.Random(seed).shuffle(shuffled)
        assert rate(["C", "B", "A"], shuffled) == first
    assert [r.label for r in first] == ["C", "A", "B"]
    assert [(r.wins, r.draws, r.losses) for r in first] == [(5, 0, 1), (3, 1, 2), (0, 1, 5)]
    win, share = matrices(["A", "B", "C"], records)
    assert win["A"]["B"] == pytest.approx(2 / 3) and win["B"]["A"] == 0.0 and win["A"]["A"] is None
    assert share["A"]["B"] == pytest.approx(0.75) and share["B"]["A"] == pytest.approx(0.25)


def test_a_torn_last_line_is_dropped_and_the_folder_stays_usable(tmp_path: Path) -> None:
    spec = TournamentSpec(bots=("A", "B", "C"), rounds=3, game_type="1v1")
    good = make_record(_bot("A"), _bot("B"), "1v1", ["A", "A", "B"], 200.0, 100.0)
    (tmp_path / PAIRS_FILE).write_text(good.model_dump_json() + "\n" + '{"a": "A", "b": "C", "na')
    finished = open_out_dir(tmp_path, spec)
    assert list(finished) == [("A", "B")]
    assert (tmp_path / PAIRS_FILE).read_text() == good.model_dump_json() + "\n"
    assert TournamentSpec.model_validate_json((tmp_path / "tournament.json").read_text()) == spec
