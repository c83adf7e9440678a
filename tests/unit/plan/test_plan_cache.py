"""The cache of large YAML files' data (labctl.plan.cache): a second read of the same text
takes the data from the cache, and gives exactly what the YAML gives; an edited text, a damaged
entry, another limit or a cache that cannot be written never gives anything else."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from labctl.errors import LabctlError
from labctl.plan import cache, source, yamlevents
from labctl.plan.bounds import InputLimits
from labctl.plan.loader import check_plan


def _plan(steps: int, *, vmax: str = "30 V", extra: str = "") -> str:
    lines = ["name: cached", 'version: "1"', "steps:"]
    lines += [f"  - {{id: m{i}, check: measure, args: {{role: psu, property: ch1.voltage}}, "
              f"limits: {{value: {{min: -1 V, max: {vmax}}}}}, tags: [t{i % 3}, 'x y'], retries: 0}}"
              for i in range(steps)]
    return "\n".join(lines) + "\n" + extra


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV, str(where))
    return where


@pytest.fixture
def yaml_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the YAML event reader was given (a read from the cache gives it none)."""
    seen: list[str] = []
    real = yamlevents.read_events

    def counting(text: str, *args, **kw):  # noqa: ANN002, ANN003
        seen.append(text)
        return real(text, *args, **kw)

    monkeypatch.setattr(yamlevents, "read_events", counting)
    return seen


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.marshal") if not p.name.startswith(".tmp-")) if folder.exists() else []


def test_a_large_file_read_twice_comes_from_the_cache_the_second_time_with_the_same_data(
        tmp_path: Path, folder: Path, yaml_reads: list[str]) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    first = source.load_yaml(path)
    assert len(yaml_reads) == 1 and len(_entries(folder)) == 1
    second = source.load_yaml(path)
    assert len(yaml_reads) == 1, "the second read parsed the YAML again"
    assert second[0] == first[0] and second[2] == first[2] == []
    assert second[0]["steps"][299]["limits"]["value"]["max"] == "30 V"
    # positions are read from the text itself when one is wanted
    assert second[1].value(("steps", 299, "limits")) == first[1].value(("steps", 299, "limits"))
    assert second[1].value(("steps", 299, "limits")).line == 303


def test_an_edited_plan_is_read_again_never_taken_from_the_cache(
        tmp_path: Path, folder: Path, yaml_reads: list[str]) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    source.load_yaml(path)
    path.write_text(_plan(300, vmax="12 V"), encoding="utf-8")  # one value changed, same size
    data, _smap, _errors = source.load_yaml(path)
    assert len(yaml_reads) == 2
    assert {s["limits"]["value"]["max"] for s in data["steps"]} == {"12 V"}


def test_a_damaged_entry_is_a_miss_and_is_replaced(tmp_path: Path, folder: Path, yaml_reads: list[str]) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    expected = source.load_yaml(path)[0]
    (entry,) = _entries(folder)
    blob = bytearray(entry.read_bytes())
    blob[-40] ^= 0x01  # one bit of the data
    entry.write_bytes(bytes(blob))
    assert source.load_yaml(path)[0] == expected
    assert len(yaml_reads) == 2
    assert source.load_yaml(path)[0] == expected  # the entry written again
    assert len(yaml_reads) == 2


def test_errors_of_a_cached_plan_point_where_they_do_without_the_cache(
        tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300, vmax="30 Q").replace("id: m150, check: measure", "id: m150, check: mesure"),
                    encoding="utf-8")

    def problems() -> list[str]:
        _loaded, errors = check_plan(path)
        return [e.format() for e in errors]

    cold = problems()
    assert _entries(folder)
    warm = problems()
    monkeypatch.setenv(cache.ENV, "off")
    assert cold == warm == problems()
    assert any(":154:" in line and "unknown check 'mesure'" in line for line in warm)


def test_off_small_files_and_files_with_errors_or_dates_are_not_kept(
        tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = tmp_path / "small.yaml"
    small.write_text(_plan(3), encoding="utf-8")
    source.load_yaml(small)
    dup = tmp_path / "dup.yaml"
    dup.write_text(_plan(300) + "name: again\n", encoding="utf-8")  # a duplicate key: an error
    assert source.load_yaml(dup)[2]
    dated = tmp_path / "dated.yaml"
    dated.write_text(_plan(300, extra="released: 2026-12-06\n"), encoding="utf-8")
    assert str(source.load_yaml(dated)[0]["released"]) == "2026-12-06"
    assert _entries(folder) == []
    monkeypatch.setenv(cache.ENV, "off")
    big = tmp_path / "big.yaml"
    big.write_text(_plan(300), encoding="utf-8")
    source.load_yaml(big)
    assert not folder.exists()


def test_other_input_limits_are_another_entry(tmp_path: Path, folder: Path, yaml_reads: list[str]) -> None:
    """A plan read under generous limits is not accepted from the cache under tight ones."""
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    source.load_yaml(path)
    with pytest.raises(LabctlError, match="too many"):
        source.load_yaml(path, limits=InputLimits(max_nodes=500))
    assert len(yaml_reads) == 2


def test_a_cache_that_cannot_be_written_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(cache.ENV, str(blocked / "cache"))
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    assert len(source.load_yaml(path)[0]["steps"]) == 300
    assert len(source.load_yaml(path)[0]["steps"]) == 300


def test_the_least_recently_used_entries_go_beyond_the_limit(
        tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    paths = []
    for i in range(5):
        path = tmp_path / f"plan{i}.yaml"
        path.write_text(_plan(300, vmax=f"{i + 10} V"), encoding="utf-8")
        paths.append(path)
    names = []
    for i, path in enumerate(paths):
        source.load_yaml(path)
        names.append(cache.key(path.read_text(encoding="utf-8"), InputLimits.from_env(), source._loader(fast=True)))
        entry = folder / f"{names[-1]}.marshal"
        os.utime(entry, ns=(i * 10**9, i * 10**9))  # distinct times, oldest first
    kept = {p.stem for p in _entries(folder)}
    assert kept == set(names[2:])


def test_an_entry_holding_more_than_plain_data_is_refused(tmp_path: Path, folder: Path,
                                                          yaml_reads: list[str]) -> None:
    """Bytes, sets or code in an entry (which labctl never writes) are a miss, checksum or not."""
    import hashlib
    import marshal

    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    expected = source.load_yaml(path)[0]
    (entry,) = _entries(folder)
    for planted in ({"steps": [{"id": b"m0"}]}, {"steps": {1, 2}}, {"code": compile("1", "x", "eval")}):
        body = marshal.dumps(planted, 4)
        entry.write_bytes(cache._MAGIC + hashlib.sha256(body).digest() + body)
        assert source.load_yaml(path)[0] == expected
    assert len(yaml_reads) == 4


def test_what_a_killed_writer_left_is_removed_once_stale(tmp_path: Path, folder: Path) -> None:
    folder.mkdir(parents=True)
    stale, fresh = folder / ".tmp-stale.marshal", folder / ".tmp-fresh.marshal"
    for left in (stale, fresh):
        left.write_bytes(b"half an entry")
    old = time.time() - cache.STALE_TMP_SECONDS - 60
    os.utime(stale, (old, old))
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    source.load_yaml(path)  # writes an entry, and prunes
    assert not stale.exists() and fresh.exists()  # (a fresh one may be another process's, mid-write)
    assert len(_entries(folder)) == 1


def test_a_user_without_a_home_folder_reads_plans_without_a_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``~`` that cannot be expanded (a container's user with no home) is no cache, not an error."""
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    path = tmp_path / "plan.yaml"
    path.write_text(_plan(300), encoding="utf-8")
    assert cache.cache_dir() is None
    assert len(source.load_yaml(path)[0]["steps"]) == 300
