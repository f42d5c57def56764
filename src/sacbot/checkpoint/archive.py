"""The checkpoint archive: a `.zip` holding one `.npy` per array plus `meta.json`.

Layout (format "sacbot-checkpoint", version 1):
- `<name>.npy` for every array (actor, critics, targets, log-alpha, every Adam step and moment), written with
  `numpy.save(allow_pickle=False)`; names are the trainer's stable `state_arrays()` keys.
- `meta.json`: {"format": "sacbot-checkpoint", "version": 1, "score": float | null, "score_kind": str | null,
  "env_steps": int, "updates": int, "created": ISO-8601 UTC, "network_sizes": {...}, "opponent": str | null,
  "contents": "full" | "actor", "extra": {...}}. An "actor" archive holds the actor's arrays and, where it
  was written with one, the temperature (`log_alpha`: a training start from it keeps the entropy weight the
  actor learnt with, `actor_archive_specs`).
An archive without `meta.json` (arrays only, the older layout) loads with `meta=None` and ranks as -inf.

Loading never unpickles: every member goes through `numpy.load(allow_pickle=False)` after its checksum is
verified, and every problem (truncation, corruption, pickled objects, unexpected names, shapes, dtypes) is a
`CheckpointError` naming what is wrong; nothing is returned half-loaded.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import os
import re
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np

from sacbot.checkpoint.atomic import atomic_write
from sacbot.errors import UserError

FORMAT = "sacbot-checkpoint"
VERSION = 1
META_MEMBER = "meta.json"
NPY_SUFFIX = ".npy"
# name -> (shape, dtype string as numpy spells it, e.g. "float32")
ArraySpecs = Mapping[str, tuple[tuple[int, ...], str]]

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:/\-\[\]]*$")
_NPY_MAGIC = b"\x93NUMPY"
_ALLOWED_KINDS = "biuf"  # bool, signed, unsigned, float: nothing that could carry Python objects
_MAX_TOTAL_BYTES = 8 * 1024**3  # refuse zip bombs before reading
_CONTENTS = ("full", "actor")
ACTOR_PREFIX = "actor."  # the actor's arrays, `actor.<parameter>`
TEMPERATURE = "log_alpha"  # the temperature's array, kept in an actor archive beside the actor's


def in_actor_archive(name: str) -> bool:
    """Whether an array belongs in an actor archive (contents "actor"): the actor's, or the temperature."""
    return name.startswith(ACTOR_PREFIX) or name == TEMPERATURE


def actor_archive_specs(specs: ArraySpecs, held: Mapping[str, object]) -> ArraySpecs:
    """Of a trainer's `specs`, what an actor archive holding the arrays `held` must match: every actor
    array, and the temperature where it holds one (older actor archives have none)."""
    return {n: s for n, s in specs.items() if in_actor_archive(n) and (n != TEMPERATURE or n in held)}


class CheckpointError(UserError):
    """An archive that cannot be used: missing, truncated, corrupt, pickled, or not matching the networks."""


@dataclass(frozen=True)
class CheckpointMeta:
    """What `meta.json` says about the arrays beside it."""

    env_steps: int = 0
    updates: int = 0
    network_sizes: Mapping[str, Any] = field(default_factory=dict)
    # The score this archive was gated with and what it measures (e.g. "eval_mean_return"); None: never gated.
    score: float | None = None
    score_kind: str | None = None
    opponent: str | None = None
    # ISO-8601 UTC; `save_checkpoint` fills it in when empty.
    created: str = ""
    # "full" (training state, resumable) or "actor" (an export for deployment).
    contents: str = "full"
    # Free-form JSON-able extras for callers (seed, campaign name, ...).
    extra: Mapping[str, Any] = field(default_factory=dict)

    def with_score(self, score: float, score_kind: str) -> CheckpointMeta:
        return replace(self, score=float(score), score_kind=score_kind)

    def created_datetime(self) -> dt.datetime | None:
        try:
            return dt.datetime.fromisoformat(self.created)
        except ValueError:
            return None

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "score": self.score,
            "score_kind": self.score_kind,
            "env_steps": self.env_steps,
            "updates": self.updates,
            "created": self.created,
            "network_sizes": dict(self.network_sizes),
            "opponent": self.opponent,
            "contents": self.contents,
            "extra": dict(self.extra),
        }


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _bad_meta(where: str, message: str) -> CheckpointError:
    return CheckpointError(f"{where}: meta.json {message}")


def meta_from_json_dict(data: Any, where: str = "checkpoint") -> CheckpointMeta:
    """Validate a parsed meta.json; raises CheckpointError naming the bad field."""
    if not isinstance(data, dict):
        raise _bad_meta(where, "is not a JSON object")
    if data.get("format") != FORMAT:
        raise _bad_meta(where, f"has format {data.get('format')!r}, expected {FORMAT!r}")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _bad_meta(where, f"has an invalid version {version!r}")
    if version > VERSION:
        raise _bad_meta(
            where, f"has version {version}, newer than this sacbot reads ({VERSION}); upgrade sacbot"
        )

    def count(key: str) -> int:
        value = data.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _bad_meta(where, f"field {key!r} must be a non-negative integer, got {value!r}")
        return value

    def optional_str(key: str) -> str | None:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise _bad_meta(where, f"field {key!r} must be a string or null, got {value!r}")
        return value

    def mapping(key: str) -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise _bad_meta(where, f"field {key!r} must be an object, got {value!r}")
        return value

    score = data.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise _bad_meta(where, f"field 'score' must be a finite number or null, got {score!r}")
        score = float(score)
    score_kind = optional_str("score_kind")
    if score is not None and not score_kind:
        raise _bad_meta(where, "has a score but no 'score_kind' saying what it measures")
    contents = data.get("contents", "full")
    if contents not in _CONTENTS:
        raise _bad_meta(where, f"field 'contents' must be one of {list(_CONTENTS)}, got {contents!r}")
    created = data.get("created", "")
    if not isinstance(created, str):
        raise _bad_meta(where, f"field 'created' must be a string, got {created!r}")
    return CheckpointMeta(
        env_steps=count("env_steps"),
        updates=count("updates"),
        network_sizes=mapping("network_sizes"),
        score=score,
        score_kind=score_kind,
        opponent=optional_str("opponent"),
        created=created,
        contents=contents,
        extra=mapping("extra"),
    )


def _check_name(name: str) -> None:
    if not _NAME.match(name) or ".." in name or name + NPY_SUFFIX == META_MEMBER:
        raise CheckpointError(f"invalid array name {name!r} (letters, digits and _ . : / - [ ] only)")


def _check_array(name: str, array: np.ndarray) -> None:
    if not isinstance(array, np.ndarray):
        raise CheckpointError(f"array {name!r} is a {type(array).__name__}, not a numpy array")
    if array.dtype.kind not in _ALLOWED_KINDS or array.dtype.fields is not None:
        raise CheckpointError(f"array {name!r} has dtype {array.dtype}, only plain numeric dtypes are stored")


def write_archive(handle: IO[bytes], arrays: Mapping[str, np.ndarray], meta: CheckpointMeta | None) -> None:
    """Write the archive into an open seekable binary file (no atomicity here: see `save_checkpoint`)."""
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            array = np.asarray(arrays[name])
            buffer = io.BytesIO()
            np.save(buffer, array, allow_pickle=False)
            archive.writestr(name + NPY_SUFFIX, buffer.getvalue())
        if meta is not None:
            archive.writestr(META_MEMBER, json.dumps(meta.to_json_dict(), indent=1, sort_keys=True) + "\n")


def save_checkpoint(
    path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray], meta: CheckpointMeta | None
) -> CheckpointMeta | None:
    """Write `arrays` + `meta` to `path` atomically (the one checkpoint writer); returns the meta as stored.

    `meta=None` writes the older arrays-only layout (tests and tools only). `created` is filled in when empty.
    """
    for name, array in arrays.items():
        _check_name(name)
        _check_array(name, np.asarray(array))
    if meta is not None and not meta.created:
        meta = replace(meta, created=now_iso())
    if meta is not None and meta.score is not None:
        if not math.isfinite(meta.score) or not meta.score_kind:
            raise CheckpointError(f"refusing to store score {meta.score!r} with kind {meta.score_kind!r}")
    try:
        atomic_write(path, lambda handle: write_archive(handle, arrays, meta))
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot write the archive ({exc.strerror or exc})") from None
    return meta


def _open_archive(path: Path) -> zipfile.ZipFile:
    if not path.exists():
        raise CheckpointError(f"{path}: no such file")
    if path.is_dir():
        raise CheckpointError(f"{path}: is a folder, not a checkpoint archive")
    try:
        return zipfile.ZipFile(path, "r")
    except zipfile.BadZipFile as exc:
        raise CheckpointError(
            f"{path}: not a readable checkpoint archive (truncated or not a zip: {exc})"
        ) from None
    except (OSError, EOFError, ValueError) as exc:
        raise CheckpointError(f"{path}: cannot read the archive ({exc})") from None


def _read_member(archive: zipfile.ZipFile, path: Path, member: str) -> bytes:
    try:
        return archive.read(member)
    except zipfile.BadZipFile as exc:
        raise CheckpointError(f"{path}: member {member} is corrupt ({exc})") from None
    except zlib.error as exc:  # a damaged compressed member (archives written by other tools)
        raise CheckpointError(f"{path}: member {member} is corrupt ({exc})") from None
    except (OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: member {member} cannot be read ({exc})") from None


def _check_npy_header(path: Path, member: str, data: bytes) -> None:
    """Read the header first, so a lying shape cannot make numpy allocate more than the member holds."""
    buffer = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(buffer)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(buffer)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(buffer)
        else:
            raise CheckpointError(f"{path}: member {member} uses unsupported .npy version {version}")
    except (ValueError, EOFError, SyntaxError) as exc:
        raise CheckpointError(f"{path}: member {member} has a damaged .npy header ({exc})") from None
    if dtype.hasobject:
        raise CheckpointError(
            f"{path}: member {member} holds pickled Python objects (refused; loading never unpickles)"
        )
    expected = math.prod(shape) * dtype.itemsize
    held = len(data) - buffer.tell()
    if held != expected:
        raise CheckpointError(f"{path}: member {member} holds {held} data bytes, its header says {expected}")


def _decode_npy(path: Path, member: str, data: bytes) -> np.ndarray:
    if not data.startswith(_NPY_MAGIC):
        raise CheckpointError(
            f"{path}: member {member} is not a .npy array (refused; loading never unpickles)"
        )
    _check_npy_header(path, member, data)
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc).lower() or "object" in str(exc).lower():
            raise CheckpointError(
                f"{path}: member {member} holds pickled Python objects (refused; loading never unpickles)"
            ) from None
        raise CheckpointError(f"{path}: member {member} is not a valid .npy array ({exc})") from None
    except (OSError, EOFError) as exc:
        raise CheckpointError(
            f"{path}: member {member} is truncated or not a valid .npy array ({exc})"
        ) from None
    if not isinstance(array, np.ndarray):
        raise CheckpointError(f"{path}: member {member} is not a plain .npy array")
    if array.dtype.kind not in _ALLOWED_KINDS or array.dtype.fields is not None:
        raise CheckpointError(
            f"{path}: member {member} has dtype {array.dtype}; only plain numeric dtypes load"
        )
    return array


def _summarise(problems: list[str], limit: int = 6) -> str:
    shown = "; ".join(problems[:limit])
    more = len(problems) - limit
    return shown + (f"; and {more} more" if more > 0 else "")


def check_specs(
    arrays: Mapping[str, np.ndarray], specs: ArraySpecs, where: str = "checkpoint", subset: bool = False
) -> None:
    """Raise CheckpointError naming every missing, unexpected, wrong-shape or wrong-dtype array."""
    problems: list[str] = []
    missing = sorted(set(specs) - set(arrays))
    if missing:
        problems.append("missing " + ", ".join(missing))
    if not subset:
        unexpected = sorted(set(arrays) - set(specs))
        if unexpected:
            problems.append("unexpected " + ", ".join(unexpected))
    for name in sorted(set(specs) & set(arrays)):
        shape, dtype = specs[name]
        array = arrays[name]
        if tuple(array.shape) != tuple(shape):
            problems.append(f"{name} has shape {tuple(array.shape)}, expected {tuple(shape)}")
        if array.dtype != np.dtype(dtype):
            problems.append(f"{name} has dtype {array.dtype}, expected {np.dtype(dtype)}")
    if problems:
        raise CheckpointError(f"{where}: does not match the networks: {_summarise(problems)}")


def read_meta(path: str | os.PathLike[str]) -> CheckpointMeta | None:
    """Only the metadata (None for the older arrays-only layout); cheap, checks meta.json's checksum only."""
    where = Path(path)
    with _open_archive(where) as archive:
        names = archive.namelist()
        if META_MEMBER not in names:
            return None
        return _parse_meta(where, _read_member(archive, where, META_MEMBER))


def _parse_meta(path: Path, raw: bytes) -> CheckpointMeta:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: meta.json is not valid JSON ({exc})") from None
    return meta_from_json_dict(data, str(path))


def load_checkpoint(
    path: str | os.PathLike[str], specs: ArraySpecs | None = None, *, subset: bool = False
) -> tuple[dict[str, np.ndarray], CheckpointMeta | None]:
    """Load and verify an archive: (arrays, meta); meta is None for the older arrays-only layout.

    With `specs`, every array's name, shape and dtype must match; `subset=True` accepts (and drops) arrays the
    specs do not name, e.g. loading only the actor from a full training archive.
    """
    where = Path(path)
    with _open_archive(where) as archive:
        infos = archive.infolist()
        names = [info.filename for info in infos]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise CheckpointError(f"{where}: duplicate members {', '.join(duplicates)}")
        if sum(info.file_size for info in infos) > _MAX_TOTAL_BYTES:
            raise CheckpointError(f"{where}: declares more than {_MAX_TOTAL_BYTES} bytes of content; refused")
        strays = [name for name in names if name != META_MEMBER and not name.endswith(NPY_SUFFIX)]
        if strays:
            raise CheckpointError(f"{where}: unexpected members {', '.join(sorted(strays))}")
        meta = _parse_meta(where, _read_member(archive, where, META_MEMBER)) if META_MEMBER in names else None
        arrays: dict[str, np.ndarray] = {}
        for member in sorted(name for name in names if name != META_MEMBER):
            name = member[: -len(NPY_SUFFIX)]
            if subset and specs is not None and name not in specs:
                continue
            try:
                _check_name(name)
            except CheckpointError as exc:
                raise CheckpointError(f"{where}: {exc}") from None
            arrays[name] = _decode_npy(where, member, _read_member(archive, where, member))
    if not arrays and meta is None:
        raise CheckpointError(f"{where}: holds no arrays and no meta.json")
    if specs is not None:
        check_specs(arrays, specs, str(where), subset=subset)
    return arrays, meta


def specs_of(arrays: Mapping[str, np.ndarray]) -> dict[str, tuple[tuple[int, ...], str]]:
    """The specs these arrays have, e.g. `specs_of(trainer.actor_arrays())` to load only the actor."""
    return {name: (tuple(np.shape(a)), str(np.asarray(a).dtype)) for name, a in arrays.items()}
