"""Fixtures of the viewer tests: the shared recorded game (played by `record_game`, tests/conftest.py) and a
headless browser on the viewer's page."""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .viewer_support import PAD, Played


def _quiet_frames(ticks: list[dict[str, Any]]) -> list[int]:
    """Frames where nothing covers the bots' centres: no bullet within 12 units, no burst for 60 turns."""
    out = []
    for i, t in enumerate(ticks):
        if t["turnNumber"] < 5 or len(t["botStates"]) < 2:
            continue
        recent = [e for tt in ticks[max(0, i - 60) : i + 1] for e in tt["events"]]
        if any(e["type"] in ("BulletHitBotEvent", "BotDeathEvent", "BulletHitBulletEvent") for e in recent):
            continue
        bots = t["botStates"]
        if any(math.dist((b["x"], b["y"]), (u["x"], u["y"])) < 12 for b in bots for u in t["bulletStates"]):
            continue
        if math.dist((bots[0]["x"], bots[0]["y"]), (bots[1]["x"], bots[1]["y"])) < 60:
            continue
        out.append(i)
    return out


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's chromium driven through its chromedriver (packages chromium and chromium-driver; .ci/run
    installs them). No network is needed: Selenium is pointed at both binaries."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser is None or chromedriver is None:
        raise RuntimeError("the page tests need Debian's chromium and chromium-driver (see .ci/run)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1200,900",
        "--force-device-scale-factor=1",
        "--user-data-dir=" + str(tmp_path_factory.mktemp("chromium")),
    ):
        options.add_argument(arg)
    drv = webdriver.Chrome(service=Service(chromedriver), options=options)
    drv.set_script_timeout(20)
    try:
        yield drv
    finally:
        drv.quit()


def _wait_for(check: Callable[[], Any], timeout: float = 10.0, what: str = "the page") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _state(driver: Any) -> dict[str, Any]:
    got: dict[str, Any] = driver.execute_script("return window.sacbotViewer.state()")
    return got


def _open_page(driver: Any, url: str) -> None:
    driver.get(url)
    _wait_for(lambda: driver.execute_script("return document.body.dataset.ready === '1'"), what="page ready")


def _pixel(driver: Any, sx: float, sy: float) -> tuple[int, int, int]:
    rgba = driver.execute_script(
        "return Array.from(document.getElementById('arena').getContext('2d')"
        ".getImageData(arguments[0], arguments[1], 1, 1).data)",
        int(sx),
        int(sy),
    )
    return (rgba[0], rgba[1], rgba[2])


def _arena_to_canvas(
    driver: Any, width: float, height: float
) -> Callable[[float, float], tuple[float, float]]:
    """Where the page must draw arena point (x, y), worked out here: the battlefield fits the canvas with
    `padding` above and below, centred, and Tank Royale's y axis points up (canvas y points down)."""
    cw, ch = driver.execute_script("const c = document.getElementById('arena'); return [c.width, c.height]")
    k = min(cw / width, ch / (height + 2 * PAD))
    left, top = (cw - width * k) / 2, (ch - height * k) / 2

    def at(x: float, y: float) -> tuple[float, float]:
        return (left + x * k, top + (height - y) * k)

    return at


def _close_to(got: tuple[int, int, int], hex_color: str, tolerance: int = 40) -> bool:
    h = hex_color.lstrip("#")
    want = tuple(int(h[i : i + 2], 16) for i in (0, 2, 4))
    return all(abs(a - b) <= tolerance for a, b in zip(got, want, strict=True))


def _click(driver: Any, element_id: str) -> None:
    driver.find_element("id", element_id).click()


def _seek(driver: Any, index: int) -> None:
    """Drag the seek bar to `index` (its input event), then wait for that frame to be drawn."""
    driver.execute_script(
        "const s = document.getElementById('seek'); s.value = arguments[0];"
        "s.dispatchEvent(new Event('input'));",
        index,
    )
    _wait_for(lambda: _state(driver)["drawn"] == index, what=f"frame {index} drawn")


def _pause(driver: Any) -> None:
    if _state(driver)["playing"]:
        _click(driver, "play")
    _wait_for(lambda: not _state(driver)["playing"], what="pause")


@pytest.fixture(scope="session")
def quiet_frames() -> Callable[[list[dict[str, Any]]], list[int]]:
    """`quiet_frames(ticks)`: frames where nothing covers the bots' centres."""
    return _quiet_frames


@pytest.fixture(scope="session")
def shared_game(record_game: Callable[..., Played]) -> Callable[[pytest.TempPathFactory], Played]:
    """`shared_game(tmp_path_factory)`: one recorded game for every test module of this folder (each module's
    `played` fixture): Corners against Fire, two rounds, seeded; Corners paints `DEBUG_SVG` once the
    controller lets it."""
    shared: dict[str, Played] = {}

    def game(tmp_path_factory: pytest.TempPathFactory) -> Played:
        if "game" not in shared:
            shared["game"] = record_game(
                tmp_path_factory.mktemp("recorded"), ("Corners", "Fire"), rounds=2, painter="Corners"
            )
        return shared["game"]

    return game


@pytest.fixture(scope="session")
def wait_for() -> Callable[..., Any]:
    """`wait_for(check, timeout=10.0, what="the page")`: check()'s first true value; fails after timeout."""
    return _wait_for


@pytest.fixture(scope="session")
def state() -> Callable[[Any], dict[str, Any]]:
    """`state(driver)`: the page's `window.sacbotViewer.state()`."""
    return _state


@pytest.fixture(scope="session")
def open_page() -> Callable[[Any, str], None]:
    """`open_page(driver, url)`: loads url and waits for the page to be ready."""
    return _open_page


@pytest.fixture(scope="session")
def pixel() -> Callable[[Any, float, float], tuple[int, int, int]]:
    """`pixel(driver, sx, sy)`: the canvas colour at (sx, sy)."""
    return _pixel


@pytest.fixture(scope="session")
def arena_to_canvas() -> Callable[[Any, float, float], Callable[[float, float], tuple[float, float]]]:
    """`arena_to_canvas(driver, width, height)`: where the page must draw an arena point."""
    return _arena_to_canvas


@pytest.fixture(scope="session")
def close_to() -> Callable[..., bool]:
    """`close_to(got, hex_color, tolerance=40)`: each channel within tolerance."""
    return _close_to


@pytest.fixture(scope="session")
def click() -> Callable[[Any, str], None]:
    """`click(driver, element_id)`: clicks the element."""
    return _click


@pytest.fixture(scope="session")
def seek() -> Callable[[Any, int], None]:
    """`seek(driver, index)`: drags the seek bar to index and waits for that frame."""
    return _seek


@pytest.fixture(scope="session")
def pause() -> Callable[[Any], None]:
    """`pause(driver)`: pauses the replay."""
    return _pause
