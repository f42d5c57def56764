"""The archive format: round trips, and every kind of bad archive refused with a message naming it."""

from __future__ import annotations

import io
import json
import os
import pickle
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sacbot.checkpoint import (
    CheckpointError,
    CheckpointMeta,
    atomic_write_json,
    atomic_write_text,
    load_checkpoint,
    read_meta,
    save_checkpoint,
)
from sacbot.errors import UserError


def test_round_trip_keeps_every_array_bit_identical_and_the_meta(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
    specs_of: Callable[..., dict[str, Any]],
) -> None:
    arrays = make_arrays(seed=3)
    meta = make_meta(score=1.5, score_kind="eval_return", opponent="SpinBot", extra={"seed": 3})
    stored = save_checkpoint(tmp_path / "a.zip", arrays, meta)
    loaded, loaded_meta = load_checkpoint(tmp_path / "a.zip", specs_of(arrays))
    assert sorted(loaded) == sorted(arrays)
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype and loaded[name].shape == array.shape
        assert loaded[name].tobytes() == array.tobytes(), name
    assert loaded_meta == stored
    assert loaded_meta is not None and loaded_meta.created  # filled in on save
    assert loaded_meta.score == 1.5 and loaded_meta.score_kind == "eval_return"
    assert loaded_meta.env_steps == 123 and loaded_meta.updates == 45 and loaded_meta.opponent == "SpinBot"
    assert read_meta(tmp_path / "a.zip") == stored


def test_meta_json_carries_the_format_marker_and_version(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    save_checkpoint(tmp_path / "a.zip", make_arrays(), make_meta())
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        meta = json.loads(archive.read("meta.json"))
        assert meta["format"] == "sacbot-checkpoint" and meta["version"] == 1
        assert meta["score"] is None and meta["network_sizes"] == {"hidden": 8, "obs": 5}
        assert "actor.fc.weight.npy" in archive.namelist()


def test_older_layout_without_meta_loads_with_meta_none(
    tmp_path: Path, make_arrays: Callable[..., dict[str, np.ndarray]], specs_of: Callable[..., dict[str, Any]]
) -> None:
    arrays = make_arrays()
    save_checkpoint(tmp_path / "old.zip", arrays, None)
    loaded, meta = load_checkpoint(tmp_path / "old.zip", specs_of(arrays))
    assert meta is None and read_meta(tmp_path / "old.zip") is None
    assert np.array_equal(loaded["log_alpha"], arrays["log_alpha"])


def test_subset_loads_only_the_named_arrays(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
    specs_of: Callable[..., dict[str, Any]],
) -> None:
    arrays = make_arrays()
    save_checkpoint(tmp_path / "a.zip", arrays, make_meta())
    actor_specs = {k: v for k, v in specs_of(arrays).items() if k.startswith("actor.")}
    loaded, _ = load_checkpoint(tmp_path / "a.zip", actor_specs, subset=True)
    assert sorted(loaded) == sorted(actor_specs)
    with pytest.raises(CheckpointError, match="unexpected critic1.fc.bias"):
        load_checkpoint(tmp_path / "a.zip", actor_specs)


def test_wrong_shape_dtype_missing_and_extra_arrays_are_all_named(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
    specs_of: Callable[..., dict[str, Any]],
) -> None:
    arrays = make_arrays()
    specs = specs_of(arrays)
    bad = dict(arrays)
    bad["actor.fc.weight"] = np.zeros((9, 5), np.float32)
    bad["log_alpha"] = np.zeros(1, np.float64)
    del bad["critic2.fc.bias"]
    bad["surprise"] = np.zeros(2, np.float32)
    save_checkpoint(tmp_path / "bad.zip", bad, make_meta())
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(tmp_path / "bad.zip", specs)
    message = str(info.value)
    assert "missing critic2.fc.bias" in message
    assert "unexpected surprise" in message
    assert "actor.fc.weight has shape (9, 5), expected (8, 5)" in message
    assert "log_alpha has dtype float64, expected float32" in message
    assert isinstance(info.value, UserError) and info.value.exit_code == 1


@pytest.mark.parametrize("keep", [0, 10, 100, 1000, -22, -1])
def test_truncated_archive_is_refused(
    tmp_path: Path,
    keep: int,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    save_checkpoint(tmp_path / "a.zip", make_arrays(), make_meta())
    data = (tmp_path / "a.zip").read_bytes()
    (tmp_path / "t.zip").write_bytes(data[:keep])
    with pytest.raises(CheckpointError, match="t.zip: .*(truncated|corrupt|cannot)"):
        load_checkpoint(tmp_path / "t.zip")


def test_flipped_bytes_in_an_array_fail_the_checksum(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    save_checkpoint(tmp_path / "a.zip", make_arrays(), make_meta())
    data = bytearray((tmp_path / "a.zip").read_bytes())
    at = data.index(b"\x93NUMPY") + 130  # past the 128-byte .npy header: inside the payload
    data[at] ^= 0xFF
    (tmp_path / "c.zip").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"member .*\.npy is corrupt \(Bad CRC-32"):
        load_checkpoint(tmp_path / "c.zip")


def _zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def test_pickled_object_array_is_refused(tmp_path: Path) -> None:
    evil = np.array([{"a": 1}, None], dtype=object)
    _zip(tmp_path / "p.zip", {"actor.w.npy": _npy(evil, allow_pickle=True)})
    with pytest.raises(CheckpointError, match="actor.w.npy holds pickled Python objects"):
        load_checkpoint(tmp_path / "p.zip")


def test_raw_pickle_member_is_refused(tmp_path: Path) -> None:
    _zip(tmp_path / "p.zip", {"actor.w.npy": pickle.dumps({"weights": [1, 2]})})
    with pytest.raises(CheckpointError, match="actor.w.npy is not a .npy array"):
        load_checkpoint(tmp_path / "p.zip")


def test_stray_members_bad_meta_and_empty_archives_are_refused(tmp_path: Path) -> None:
    _zip(tmp_path / "s.zip", {"a.npy": _npy(np.zeros(2)), "payload.pkl": b"x"})
    with pytest.raises(CheckpointError, match="unexpected members payload.pkl"):
        load_checkpoint(tmp_path / "s.zip")
    _zip(tmp_path / "m.zip", {"a.npy": _npy(np.zeros(2)), "meta.json": b"{not json"})
    with pytest.raises(CheckpointError, match="meta.json is not valid JSON"):
        load_checkpoint(tmp_path / "m.zip")
    meta = {"format": "sacbot-checkpoint", "version": 1, "score": "high", "score_kind": "x"}
    _zip(tmp_path / "k.zip", {"a.npy": _npy(np.zeros(2)), "meta.json": json.dumps(meta).encode()})
    with pytest.raises(CheckpointError, match="field 'score' must be a finite number"):
        load_checkpoint(tmp_path / "k.zip")
    meta = {"format": "sacbot-checkpoint", "version": 99}
    _zip(tmp_path / "v.zip", {"a.npy": _npy(np.zeros(2)), "meta.json": json.dumps(meta).encode()})
    with pytest.raises(CheckpointError, match="version 99, newer"):
        load_checkpoint(tmp_path / "v.zip")
    _zip(tmp_path / "e.zip", {})
    with pytest.raises(CheckpointError, match="no arrays and no meta.json"):
        load_checkpoint(tmp_path / "e.zip")


def test_missing_file_and_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no such file"):
        load_checkpoint(tmp_path / "nope.zip")
    with pytest.raises(CheckpointError, match="is a folder"):
        load_checkpoint(tmp_path)


def test_save_refuses_object_arrays_and_bad_names_without_touching_the_target(
    tmp_path: Path,
    make_arrays: Callable[..., dict[str, np.ndarray]],
    make_meta: Callable[..., CheckpointMeta],
) -> None:
    target = tmp_path / "a.zip"
    save_checkpoint(target, make_arrays(), make_meta())
    before = target.read_bytes()
    with pytest.raises(CheckpointError, match="dtype object"):
        save_checkpoint(target, {"x": np.array([None], dtype=object)}, make_meta())
    with pytest.raises(CheckpointError, match="invalid array name"):
        save_checkpoint(target, {"../x": np.zeros(1)}, make_meta())
    with pytest.raises(CheckpointError, match="refusing to store score nan"):
        save_checkpoint(target, make_arrays(), make_meta(score=float("nan"), score_kind="k"))
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["a.zip"]  # no temporary file left behind


def test_atomic_text_and_json_writers(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "sub" / "round_counter.json", {"rounds": 3, "time": 1.5})
    assert json.loads((tmp_path / "sub" / "round_counter.json").read_text()) == {"rounds": 3, "time": 1.5}
    atomic_write_text(tmp_path / "sub" / "round_counter.json", "replaced")
    assert (tmp_path / "sub" / "round_counter.json").read_text() == "replaced"
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["round_counter.json"]


def test_a_write_removes_the_temporary_files_a_killed_writer_of_the_same_file_left(tmp_path: Path) -> None:
    old = time.time() - 2 * 3600
    stale = tmp_path / ".best.zip.k1ll3d.sacbot-tmp"
    other = tmp_path / ".latest.zip.k1ll3d.sacbot-tmp"
    live = tmp_path / ".best.zip.wr1t1ng.sacbot-tmp"
    for path in (stale, other, live):
        path.write_bytes(b"partial")
    for path in (stale, other):
        os.utime(path, (old, old))
    save_checkpoint(tmp_path / "best.zip", {"w": np.zeros(3, np.float32)}, None)
    assert not stale.exists()  # an hour old, of the same target: a killed writer's
    assert other.exists() and live.exists()  # another target waits for its own write; a fresh one may be live
    atomic_write_json(tmp_path / "latest.zip", {})
    assert not other.exists() and live.exists()


def test_a_header_that_lies_about_the_shape_is_refused_before_allocating(tmp_path: Path) -> None:
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    _zip(tmp_path / "huge.zip", {"a.npy": header.getvalue() + b"\0" * 16})
    with pytest.raises(CheckpointError, match="a.npy holds 16 data bytes, its header says 8000000000000"):
        load_checkpoint(tmp_path / "huge.zip")
