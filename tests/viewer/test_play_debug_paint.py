"""`sacbot play` paints its debug graphics (remembered enemy, aim point, action bars) only while the server
lets it debug: a real game on the embedded arena with and without `--debug-graphics`, and the viewer page
drawing the recorded paint when its "Debug graphics" box is ticked."""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sacbot.agent.features import RoundMemory
from sacbot.arena.battle import run_battle
from sacbot.checkpoint import CheckpointMeta, save_checkpoint
from sacbot.engine import game_setup_for
from sacbot.protocol import TickEventForObserver
from sacbot.runtime.debug_paint import AIM_COLOR, paint
from sacbot.viewer.pages import ReplayServer, replay_pages
from sacbot.viewer.reader import read_recording
from sacbot.viewer.recording import RecordingWriter

REPO = Path(__file__).resolve().parents[2]
SACBOT, OPPONENT = REPO / "bots" / "SacBot", REPO / "bots" / "TrackFire"
SVG = "{http://www.w3.org/2000/svg}"


def play_game(tmp: Path, debug_graphics: bool) -> tuple[list[str | None], Path]:
    """One round of SacBot (eval mode, a fresh init) against TrackFire, recorded; SacBot's debug graphics
    as observers saw them, one entry per tick."""
    from sacbot.agent.trainer import SacTrainer
    from sacbot.agent.trainer_config import TrainerConfig

    weights = tmp / "weights"
    sac = SacTrainer(TrainerConfig(seed=11, device="cpu", replay_capacity=64))
    save_checkpoint(
        weights / "best.zip", sac.state_arrays(), CheckpointMeta(network_sizes=sac.network_sizes())
    )
    seen: list[str | None] = []

    def on_tick(tick: TickEventForObserver) -> None:
        seen.extend(b.debug_graphics for b in tick.bot_states if b.name == "SacBot")

    writer = RecordingWriter(tmp / "recordings")
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("SACBOT_")]:
            mp.delenv(key)
        mp.setenv("SACBOT_WEIGHTS_DIR", str(weights))
        mp.setenv("SACBOT_EVAL_MODE", "1")
        try:
            run_battle(
                [SACBOT, OPPONENT],
                game_setup_for("1v1", number_of_rounds=1),
                log_dir=tmp / "logs",
                on_tick=on_tick,
                recorder=writer,
                debug_graphics=debug_graphics,
                seed=5,  # fixed start positions: the page test needs a turn with an aim point clear of bots
            )
        finally:
            writer.close()
    (path,) = writer.files
    return seen, path


@pytest.fixture(scope="module")
def painted(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str | None], Path]:
    return play_game(tmp_path_factory.mktemp("debug"), True)


def test_play_paints_valid_svg_only_while_the_server_lets_it(
    painted: tuple[list[str | None], Path], tmp_path: Path
) -> None:
    seen, _ = painted
    # The first turn's state comes before the bot's first intent; from then on every tick carries its paint.
    assert len(seen) > 20 and all(svg is not None for svg in seen[1:])
    shapes: set[str] = set()
    for svg in seen[1:]:
        assert svg is not None
        root = ET.fromstring(svg)  # well-formed XML, an SVG
        assert root.tag == f"{SVG}svg"
        shapes.update(child.tag.removeprefix(SVG) for child in root)
        assert len(root.findall(f"{SVG}rect")) == 4  # the action's bar chart
    assert shapes == {"rect", "line", "circle"}  # the enemy and the aim point, once it was scanned

    without, _ = play_game(tmp_path, False)
    assert len(without) > 20 and all(svg is None for svg in without)


def test_the_paint_puts_the_aim_point_along_the_gun_at_the_enemys_distance() -> None:
    memory = RoundMemory(800.0, 600.0, 1)
    state = SimpleNamespace(x=100.0, y=100.0, gun_direction=90.0)
    assert "circle" not in paint(memory, state, [0.0, 0.0, 0.0, 0.0])  # nothing seen yet: bars only
    memory.seen, memory.enemy_x, memory.enemy_y = True, 400.0, 500.0
    memory.turn, memory.last_scan_turn = 30, 29
    root = ET.fromstring(paint(memory, state, [1.0, -0.5, 2.0, 0.25]))
    enemy, aim = root.findall(f"{SVG}circle")
    assert (float(enemy.get("cx", "")), float(enemy.get("cy", ""))) == (400.0, 500.0)
    assert (float(aim.get("cx", "")), float(aim.get("cy", ""))) == pytest.approx((100.0, 600.0), abs=0.1)
    heights = [float(r.get("height", "")) for r in root.findall(f"{SVG}rect")]
    assert heights == [20.0, 10.0, 20.0, 5.0]  # |a| x 20 units, clipped to 1
    memory.turn = 40  # an old scan: the ring fades
    assert 'opacity="0.4"' in paint(memory, state, [0.0, 0.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def replay(painted: tuple[list[str | None], Path]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    rec = read_recording(painted[1])
    ticks = [m for m in rec.messages() if m["type"] == "TickEventForObserver"]
    with ReplayServer(replay_pages(rec)) as server:
        yield server.url, ticks


def _aim_point(svg: str) -> tuple[float, float] | None:
    found = re.search(rf'<circle cx="([-\d.]+)" cy="([-\d.]+)" r="4" fill="{AIM_COLOR}"/>', svg)
    return (float(found.group(1)), float(found.group(2))) if found else None


def test_the_page_draws_plays_paint_when_debug_graphics_is_ticked(
    driver: Any,
    replay: tuple[str, list[dict[str, Any]]],
    wait_for: Callable[..., Any],
    open_page: Callable[[Any, str], None],
    pixel: Callable[[Any, float, float], tuple[int, int, int]],
    arena_to_canvas: Callable[..., Callable[[float, float], tuple[float, float]]],
    close_to: Callable[..., bool],
    click: Callable[[Any, str], None],
    seek: Callable[[Any, int], None],
    pause: Callable[[Any], None],
) -> None:
    url, ticks = replay

    def clear_aim(i: int) -> tuple[float, float] | None:
        states = ticks[i]["botStates"]
        svg = next((b.get("debugGraphics") for b in states if b["name"] == "SacBot"), None)
        point = _aim_point(svg) if svg else None
        if point is None or not (40 < point[0] < 760 and 40 < point[1] < 560):
            return None
        near = any(math.dist(point, (b["x"], b["y"])) < 60 for b in states)
        near = near or any(math.dist(point, (s["x"], s["y"])) < 20 for s in ticks[i]["bulletStates"])
        return None if near else point

    index = next(i for i in range(len(ticks)) if clear_aim(i) is not None)
    point = clear_aim(index)
    assert point is not None
    open_page(driver, url)
    pause(driver)
    click(driver, "show-scans")  # no scan arc over the point
    seek(driver, index)
    at = arena_to_canvas(driver, 800, 600)
    assert not close_to(pixel(driver, *at(*point)), AIM_COLOR)
    click(driver, "show-debug")
    wait_for(lambda: close_to(pixel(driver, *at(*point)), AIM_COLOR, 30), what="the aim point drawn")
