"""Compile a small C source with the system C compiler and load it with ctypes.

The shared object is cached per source, compiler flags and machine under $XDG_CACHE_HOME/sacbot/native (or
~/.cache). `pip install` builds the project's kernels there (`prebuild`, called by hatch_build.py), so a
process finds them compiled and loads them (no compiler needed then); where the install had no compiler, the
first use compiles (`build_and_load`). A build is written to a temporary name and renamed, so concurrent
builds never load a partial file, and a damaged cache file is rebuilt once. Where no build exists and no
compiler is found, or it fails, `build_and_load` returns None and the caller keeps its numpy or torch path.
`SACBOT_NATIVE=0` turns every kernel off.

Standard library only: the build hook loads this file by path, before sacbot is installed.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

# -ffast-math lets the compiler vectorise sums (in another order: ~1e-7 relative) and call glibc's vector
# expf. It is given to the compile step only: linking with it would add crtfastmath.o, whose constructor turns
# on flush-to-zero for the whole process (numpy, torch, everything) when loaded.
COMPILE_FLAGS = ["-O3", "-march=native", "-fPIC", "-ffast-math", "-c"]
LINK_FLAGS = ["-shared"]


def native_enabled() -> bool:
    return os.environ.get("SACBOT_NATIVE", "1") != "0"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sacbot" / "native"


def _machine_key() -> str:
    flags = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags = line
                break
    except OSError:
        pass
    return f"{platform.machine()}|{platform.system()}|{flags}"


def find_compiler() -> str | None:
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def library_path(name: str, source: str) -> Path:
    """Where the build of `source` for this machine is cached (whichever compiler made it)."""
    key = "\0".join([source, *COMPILE_FLAGS, *LINK_FLAGS, _machine_key()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_dir() / f"{name}_{digest}.so"


def prebuild(name: str, source: str) -> Path:
    """Compile `source` into the cache unless it is there (the install-time build); its path. Raises
    RuntimeError without a compiler, and the compiler's error when it fails."""
    target = library_path(name, source)
    if not target.exists():
        compiler = find_compiler()
        if compiler is None:
            raise RuntimeError("no C compiler (cc, gcc or $CC) was found")
        _compile(compiler, name, source, target)
    return target


def build_and_load(name: str, source: str, symbols: Sequence[str]) -> ctypes.CDLL | None:
    """The compiled `source` (cached as <name>_<digest>.so; compiled now if it is not there), or None where
    it cannot be built or lacks one of `symbols`."""
    try:
        target = library_path(name, source)
        for attempt in (1, 2):
            if not target.exists():
                compiler = find_compiler()
                if compiler is None:
                    return None
                _compile(compiler, name, source, target)
            try:
                lib = ctypes.CDLL(str(target))
                for symbol in symbols:
                    getattr(lib, symbol)
                return lib
            except (OSError, AttributeError):
                if attempt == 2:
                    return None
                target.unlink(missing_ok=True)  # a damaged cache file: build it once more
        return None
    except Exception:  # noqa: BLE001 - no compiler, no home, no disk: the caller's fallback does the work
        return None


def _compile(compiler: str, name: str, source: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        src = Path(tmp) / f"{name}.c"
        src.write_text(source)
        obj, built = Path(tmp) / f"{name}.o", Path(tmp) / target.name
        for argv in (
            [compiler, *COMPILE_FLAGS, "-o", str(obj), str(src)],
            [compiler, *LINK_FLAGS, "-o", str(built), str(obj), "-lm"],
        ):
            try:
                subprocess.run(argv, check=True, capture_output=True, text=True, timeout=120)
            except subprocess.CalledProcessError as exc:
                tail = "\n".join((exc.stderr or "").splitlines()[-5:])
                raise RuntimeError(f"{Path(argv[0]).name} failed on {name}.c: {tail}") from exc
        os.replace(built, target)


class BuiltOnce(Generic[T]):
    """A kernel made by `make` on the first call (None: not buildable; never tried when SACBOT_NATIVE=0).

    Thread-safe: a second caller during the first compile waits for it rather than falling back. `value` may
    be set directly (tests switch a kernel off and on with it)."""

    def __init__(self, make: Callable[[], T | None]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._tried = False
        self.value: T | None = None

    def __call__(self) -> T | None:
        with self._lock:
            if not self._tried:
                self._tried = True
                if native_enabled():
                    self.value = self._make()
            return self.value
