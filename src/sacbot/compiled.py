"""The game engine compiled with mypyc: the same Python source as C extensions, used only while it matches.

Why: one in-process arena step is ~50 us of pure Python (engine rules, the opponent's tick view, features);
compiled by mypyc from the very same typed modules it runs about twice as fast, which is what lets 16
vectorised arenas pass 30,000 steps/s on a 2-core machine (`sacbot bench env`).

How it stays one code path:
- The compiled modules live outside the source tree, in a cache folder named by a digest of their sources
  and the interpreter's ABI ($SACBOT_COMPILED_DIR, else $XDG_CACHE_HOME/sacbot/compiled or ~/.cache/...).
  `install()` (run by `import sacbot`) adds an import finder for them only if the folder for the current
  digest is complete, so an edited engine file simply runs as Python until it is rebuilt: a stale build is
  never loaded.
- `pip install` builds them (the hatch build hook `hatch_build.py` calls `build`); `sacbot build-engine`
  rebuilds them after an edit. Where mypyc or a C compiler is missing the build fails with a warning and
  everything runs as plain Python. `SACBOT_COMPILED=0` turns the compiled modules off.

This module uses the standard library only: the build hook loads it by path, before sacbot is installed.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

# The modules compiled together (one mypyc group): everything an in-process arena step runs, from the
# engine's rules to the classic opponents and the bot's features.
COMPILED_MODULES = (
    "sacbot.agent.features",
    "sacbot.engine.bullets",
    "sacbot.engine.collisions",
    "sacbot.engine.events",
    "sacbot.engine.game",
    "sacbot.engine.geometry",
    "sacbot.engine.guns",
    "sacbot.engine.intents",
    "sacbot.engine.movement",
    "sacbot.engine.placement",
    "sacbot.engine.rules",
    "sacbot.engine.scans",
    "sacbot.engine.scoring",
    "sacbot.engine.scripted",
    "sacbot.engine.setup",
    "sacbot.engine.state",
    "sacbot.engine.views",
    "sacbot.env.stepping",
    "sacbot.env.ticks",
    "sacbot.opponents.base",
    "sacbot.opponents.corners",
    "sacbot.opponents.crazy",
    "sacbot.opponents.dispatch",
    "sacbot.opponents.fire",
    "sacbot.opponents.motion",
    "sacbot.opponents.my_first_bot",
    "sacbot.opponents.ram_fire",
    "sacbot.opponents.spin_bot",
    "sacbot.opponents.target",
    "sacbot.opponents.track_fire",
    "sacbot.opponents.velocibot",
    "sacbot.opponents.walls",
)
SOURCE_ROOT = Path(__file__).resolve().parent.parent  # the folder that holds the sacbot package
COMPLETE = "COMPLETE"  # written last (the digest, then each file and its size); no manifest: unfinished


def ext_suffix() -> str:
    return str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")


def module_path(name: str, root: Path = SOURCE_ROOT) -> Path:
    return root.joinpath(*name.split(".")).with_suffix(".py")


def source_digest(root: Path = SOURCE_ROOT) -> str:
    """The build's identity: the compiled modules' sources and the interpreter's extension ABI."""
    h = hashlib.sha256(f"{sys.implementation.cache_tag}|{ext_suffix()}|{sys.platform}".encode())
    for name in COMPILED_MODULES:
        h.update(b"\0" + name.encode() + b"\0")
        h.update(module_path(name, root).read_bytes())
    return h.hexdigest()[:20]


def cache_root() -> Path:
    explicit = os.environ.get("SACBOT_COMPILED_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sacbot" / "compiled"


def build_folder(root: Path = SOURCE_ROOT) -> Path:
    return cache_root() / source_digest(root)


def compiled_files(folder: Path) -> dict[str, Path] | None:
    """module name -> extension file of a complete, undamaged build folder (None otherwise).

    COMPLETE, written last, lists every file with its size: a truncated file (a full disk, a killed copy)
    disqualifies the folder, so sacbot runs as Python rather than failing to import."""
    try:
        manifest = (folder / COMPLETE).read_text().splitlines()
    except OSError:
        return None
    sizes: dict[str, int] = {}
    for line in manifest[1:]:
        rel, _, text = line.rpartition(" ")
        if rel and text.isdigit():
            sizes[rel] = int(text)
    suffix = ext_suffix()
    files: dict[str, Path] = {}
    for rel, expected in sizes.items():
        path = folder / rel
        try:
            if path.stat().st_size != expected:
                return None
        except OSError:
            return None
        if rel.endswith(suffix):
            files[rel[: -len(suffix)].replace("/", ".")] = path
    if not set(COMPILED_MODULES) <= set(files):
        return None
    return files


class CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules of one build folder (ahead of the source files)."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(file))
        return importlib.util.spec_from_file_location(fullname, str(file), loader=loader)


def enabled() -> bool:
    return os.environ.get("SACBOT_COMPILED", "1") != "0"


def install() -> bool:
    """Put the compiled modules ahead of the sources if a complete build of exactly these sources exists.
    Called once by `import sacbot`, before any engine module is imported."""
    if any(isinstance(f, CompiledFinder) for f in sys.meta_path):
        return True
    if not enabled():
        return False
    try:
        files = compiled_files(build_folder())
    except OSError:  # a source file unreadable: run what Python finds
        return False
    if files is None:
        return False
    sys.meta_path.insert(0, CompiledFinder(files))
    return True


def engine_is_compiled() -> bool:
    """Whether the engine modules this process imported are the compiled ones."""
    import sacbot.engine.game as game  # here, not at the top: this module must not import the engine

    return not str(game.__file__).endswith(".py")


def build(source_root: Path = SOURCE_ROOT, python: str = sys.executable, verbose: bool = False) -> Path:
    """Compile COMPILED_MODULES with mypyc into their cache folder (already there: nothing to do) and return
    it. Raises RuntimeError with mypyc's last lines if it fails. The folder appears whole or not at all."""
    digest = source_digest(source_root)
    target = cache_root() / digest
    if compiled_files(target) is not None:
        return target
    cache_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_root(), prefix=".build-") as tmp:
        work = Path(tmp) / "src"
        for py in (source_root / "sacbot").rglob("*.py"):  # the whole package: mypyc type-checks the imports
            dest = work / py.relative_to(source_root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(py, dest)
        if source_digest(work) != digest:
            raise RuntimeError("the engine sources changed while they were being copied; build again")
        (work / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n")
        files = [str(module_path(name, Path("."))) for name in COMPILED_MODULES]
        proc = subprocess.run(
            [python, "-m", "mypyc", *files],
            cwd=work,
            capture_output=not verbose,
            text=True,
            timeout=1800,
        )
        if proc.returncode != 0:
            tail = "\n".join(((proc.stdout or "") + (proc.stderr or "")).splitlines()[-15:])
            raise RuntimeError(f"mypyc failed (exit {proc.returncode}):\n{tail}")
        out = Path(tmp) / "out"
        suffix = ext_suffix()
        for name in COMPILED_MODULES:
            built = module_path(name, work).with_suffix("").with_name(name.rsplit(".", 1)[1] + suffix)
            dest = out.joinpath(*name.split(".")).with_name(built.name)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(built, dest)
        for shared in work.glob(f"*__mypyc{suffix}"):
            shutil.copyfile(shared, out / shared.name)
        manifest = [digest]
        for path in sorted(out.rglob(f"*{suffix}")):
            manifest.append(f"{path.relative_to(out).as_posix()} {path.stat().st_size}")
        with open(out / COMPLETE, "w") as f:
            f.write("\n".join(manifest) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if target.exists() and compiled_files(target) is None:  # damaged or unfinished: set it aside
            stale = Path(tmp) / "stale"
            os.rename(target, stale)
        try:
            os.rename(out, target)
        except OSError:
            if compiled_files(target) is None:  # not another build's finished folder: a real failure
                raise
    return target
