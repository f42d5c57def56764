"""The viewer page in a real headless Chromium: a replay draws the recorded game where it happened, pause,
step and seek work, debug graphics show on demand, and the live page follows a game on the embedded arena."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sacbot.viewer.pages import ReplayServer, live_pages, replay_pages
from sacbot.viewer.reader import read_recording

from .viewer_support import STYLE, Played


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory, shared_game: Callable[[pytest.TempPathFactory], Played]
) -> Played:
    return shared_game(tmp_path_factory)


@pytest.fixture(scope="module")
def replay(played: Played) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    rec = read_recording(played.path)
    ticks = [m for m in rec.messages() if m["type"] == "TickEventForObserver"]
    with ReplayServer(replay_pages(rec)) as server:
        yield server.url, ticks


def test_a_recorded_game_loads_and_the_tanks_are_where_they_were(
    driver: Any,
    replay: tuple[str, list[dict[str, Any]]],
    quiet_frames: Callable[[list[dict[str, Any]]], list[int]],
    state: Callable[[Any], dict[str, Any]],
    open_page: Callable[[Any, str], None],
    pixel: Callable[[Any, float, float], tuple[int, int, int]],
    arena_to_canvas: Callable[..., Callable[[float, float], tuple[float, float]]],
    close_to: Callable[..., bool],
    click: Callable[[Any, str], None],
    seek: Callable[[Any, int], None],
    pause: Callable[[Any], None],
) -> None:
    url, ticks = replay
    open_page(driver, url)
    s = state(driver)
    assert s["mode"] == "replay" and s["frames"] == len(ticks) and s["rounds"] == 2
    pause(driver)
    click(driver, "show-scans")  # scan arcs off: they are drawn over the tanks, half transparent
    at = arena_to_canvas(driver, 800, 600)
    quiet = quiet_frames(ticks)
    round2 = [i for i in quiet if ticks[i]["roundNumber"] == 2]
    for index in (quiet[0], quiet[len(quiet) // 2], round2[len(round2) // 3]):
        seek(driver, index)
        tick = ticks[index]
        assert (state(driver)["round"], state(driver)["turn"]) == (tick["roundNumber"], tick["turnNumber"])
        for bot in tick["botStates"]:
            # The radar's round base sits on the bot's centre, in the bot's radar colour.
            want = bot.get("radarColor") or STYLE["defaults"]["radarColor"]
            got = pixel(driver, *at(bot["x"], bot["y"]))
            assert close_to(got, want), (index, bot["name"], got, want)
            # Mirrored top to bottom there is only the (black) battlefield: y points up.
            mirror = (bot["x"], 600 - bot["y"])
            if all(math.dist(mirror, (b["x"], b["y"])) > 60 for b in tick["botStates"]):
                assert close_to(pixel(driver, *at(*mirror)), STYLE["canvas"]["ground"], 8)


def test_pause_step_speed_and_seek(
    driver: Any,
    replay: tuple[str, list[dict[str, Any]]],
    wait_for: Callable[..., Any],
    state: Callable[[Any], dict[str, Any]],
    open_page: Callable[[Any, str], None],
    click: Callable[[Any, str], None],
    seek: Callable[[Any, int], None],
    pause: Callable[[Any], None],
) -> None:
    url, ticks = replay
    open_page(driver, url)
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "speed")).select_by_visible_text("8x")
    start = state(driver)["cursor"]
    wait_for(lambda: state(driver)["cursor"] > start + 40, what="playing at 8x")
    pause(driver)
    held = state(driver)["cursor"]
    time.sleep(0.5)
    assert state(driver)["cursor"] == held and state(driver)["drawn"] == held
    click(driver, "step")
    wait_for(lambda: state(driver)["drawn"] == held + 1, what="one step")
    round2 = next(i for i, t in enumerate(ticks) if t["roundNumber"] == 2)
    seek(driver, round2 + 5)
    assert (state(driver)["round"], state(driver)["turn"]) == (2, 6)
    assert driver.find_element("id", "position").text == "round 2/2, turn 6"
    # The seek bar marks where round 2 starts.
    marks = driver.find_elements("css selector", "#marks span")
    assert len(marks) == 1 and marks[0].get_attribute("title") == "round 2"
    left = float(marks[0].get_attribute("style").split("left:")[1].split("%")[0])
    assert abs(left - 100 * round2 / (len(ticks) - 1)) < 0.01
    # The page's explosion randomness is the clip renderer's, number for number.
    from sacbot.viewer.painter import mulberry32

    page = driver.execute_script("const r = mulberry32(987654321); return [r(), r(), r(), r()]")
    rnd = mulberry32(987654321)
    assert page == [next(rnd) for _ in range(4)]
    # Space plays again from there; the canvas shows each new frame.
    driver.find_element("tag name", "body").send_keys(" ")
    wait_for(lambda: state(driver)["drawn"] > round2 + 10, what="playing after space")


def test_debug_graphics_are_drawn_when_the_toggle_is_on(
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
    open_page(driver, url)
    pause(driver)
    index = next(
        i
        for i, t in enumerate(ticks)
        if any(b.get("debugGraphics") for b in t["botStates"])
        and all(math.dist((120, 120), (b["x"], b["y"])) > 60 for b in t["botStates"])
    )
    seek(driver, index)
    at = arena_to_canvas(driver, 800, 600)
    # The bot's SVG fills arena (100..140, 100..140) red: it is not drawn until asked for.
    assert not close_to(pixel(driver, *at(120, 120)), "#FF0000")
    click(driver, "show-debug")
    wait_for(lambda: close_to(pixel(driver, *at(120, 120)), "#FF0000", 10), what="debug graphics")
    assert not close_to(pixel(driver, *at(160, 120)), "#FF0000")  # just the square


def test_clicking_a_bot_follows_it(
    driver: Any,
    replay: tuple[str, list[dict[str, Any]]],
    quiet_frames: Callable[[list[dict[str, Any]]], list[int]],
    wait_for: Callable[..., Any],
    state: Callable[[Any], dict[str, Any]],
    open_page: Callable[[Any, str], None],
    seek: Callable[[Any, int], None],
    pause: Callable[[Any], None],
) -> None:
    url, ticks = replay
    open_page(driver, url)
    pause(driver)
    index = quiet_frames(ticks)[0]
    seek(driver, index)
    bot = ticks[index]["botStates"][0]
    driver.find_element("css selector", f"#bots li[data-id='{bot['id']}']").click()
    wait_for(lambda: state(driver)["followed"] == bot["id"], what="following")
    title = driver.find_element("id", "state-title").get_attribute("textContent")
    assert title == f"{bot['name']} ({bot['id']})"
    values = dict(
        zip(
            [e.text for e in driver.find_elements("css selector", "#state dt")],
            [e.text for e in driver.find_elements("css selector", "#state dd")],
            strict=True,
        )
    )
    assert float(values["x"]) == pytest.approx(bot["x"], abs=0.01)
    assert float(values["energy"]) == pytest.approx(bot["energy"], abs=0.01)
    assert "followed" in driver.find_element(
        "css selector", f"#bots li[data-id='{bot['id']}']"
    ).get_attribute("class")


def test_the_live_page_follows_a_game_on_the_embedded_arena(
    driver: Any,
    wait_for: Callable[..., Any],
    state: Callable[[Any], dict[str, Any]],
    open_page: Callable[[Any, str], None],
    pixel: Callable[[Any, float, float], tuple[int, int, int]],
    arena_to_canvas: Callable[..., Callable[[float, float], tuple[float, float]]],
    close_to: Callable[..., bool],
    click: Callable[[Any, str], None],
    pause: Callable[[Any], None],
) -> None:
    from sacbot.arena.controller import play_game
    from sacbot.arena.server import EmbeddedArena
    from sacbot.engine import game_setup_for

    with EmbeddedArena(tps=30, http_handler=live_pages()) as arena:
        page = f"http://127.0.0.1:{arena.port}/"
        # Plain HTTP on the WebSocket port: the page's files, and a 404 for anything else.
        with urllib.request.urlopen(page + "config.json", timeout=5) as r:
            assert json.load(r)["mode"] == "live"
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(page + "nope", timeout=5)
        assert missing.value.code == 404
        open_page(driver, page)
        wait_for(lambda: driver.find_element("id", "status").text.startswith("observing"), what="observer")
        bots = [
            subprocess.Popen(
                [sys.executable, "-m", "sacbot.bench.benchbot"],
                env=dict(os.environ, SERVER_URL=arena.url, BOT_NAME=f"Live{i}", BOT_VERSION="1.0"),
            )
            for i in range(2)
        ]
        setup = game_setup_for("1v1", number_of_rounds=50)
        game = threading.Thread(target=_quietly, args=(play_game, arena.url, setup, ["Live0", "Live1"]))
        game.daemon = True
        game.start()
        try:
            wait_for(lambda: state(driver)["frames"] > 10, timeout=20, what="live ticks")
            first = state(driver)
            assert first["following"] and first["mode"] == "live"
            wait_for(lambda: state(driver)["turn"] > first["turn"] + 10, what="turns going on")

            def arena_at() -> tuple[int, int]:
                got = arena.call(
                    lambda core: (
                        (core.run.game.round_number, core.run.game.turn_number) if core.run else (0, 0)
                    )
                )
                assert isinstance(got, tuple)
                return got

            # The page keeps up with the arena (30 turns a second): a few turns behind at most.
            behind = []
            for _ in range(5):
                (round_number, turn), seen = arena_at(), state(driver)
                if seen["round"] == round_number:
                    behind.append(turn - seen["turn"])
                time.sleep(0.1)
            assert behind and -2 <= min(behind) <= 6, behind
            # Paused, the page holds a frame (the game goes on) and draws the bots where that tick has them.
            pause(driver)
            drawn = state(driver)["draws"]
            click(driver, "show-scans")  # scan arcs off: they are drawn over the tanks, half transparent
            wait_for(lambda: state(driver)["draws"] > drawn, what="the frame redrawn without scans")
            s = state(driver)
            tick = driver.execute_script("return window.sacbotViewer.tick()")
            assert tick["turnNumber"] == s["turn"]
            at = arena_to_canvas(driver, 800, 600)
            for bot in tick["botStates"]:
                assert close_to(pixel(driver, *at(bot["x"], bot["y"])), STYLE["defaults"]["radarColor"])
            wait_for(lambda: state(driver)["frames"] > s["frames"] + 5, what="frames while paused")
            assert state(driver)["cursor"] == s["cursor"]
            click(driver, "live")  # back to the head of the game
            wait_for(lambda: state(driver)["following"] and state(driver)["turn"] > s["turn"], what="live")
        finally:
            for b in bots:
                b.terminate()
            for b in bots:
                b.wait(10)


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # the arena stops under it
        pass
