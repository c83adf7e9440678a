"""A cache of the data read from large YAML files, as Python keeps compiled modules.

A lab runs the same plans again and again. Reading a plan's YAML is most of what loading it
costs (libyaml's events, one Python object each, about 17 µs a step of a ``measure`` plan),
and the data it gives is plain: dicts, lists, text, numbers, true/false, null. The first read
of a large file keeps that data, in :mod:`marshal`'s format, under the SHA-256 of the text;
the next read of the same text takes it from there (about 1 µs a step) and checks nothing less:
everything after the YAML (includes, pydantic, every check of the plan) runs as always, and
positions are still read from the text itself when an error needs one.

What is kept, and when:

* only a file of :data:`MIN_BYTES` or more that read cleanly: no error, no anchor or tag
  (the event reader's plain path), only types marshal keeps exactly (a date is not);
* the key covers the text, the input limits, the YAML loader and the code that reads it
  (the files' sizes and times, labctl's, PyYAML's and Python's versions), so an edited
  plan, another limit or a new labctl never meets an old entry;
* an entry carries the SHA-256 of its bytes, checked on every read, and must hold plain data
  only: a damaged entry is a miss (and is removed), never a wrong plan. (Like Python's
  ``__pycache__``, the folder is trusted as the user's own: it is made readable by its owner
  only, and a folder others can write to is no place for it.)
* at most :data:`MAX_ENTRIES` entries and :data:`MAX_TOTAL_BYTES`: the least recently used
  go first.

Where: ``$LABCTL_PLAN_CACHE`` (a folder, or ``off``), else ``$XDG_CACHE_HOME/labctl/plans``
(by default ``~/.cache/labctl/plans``). A cache that cannot be read or written (a read-only
home, a full disk) is simply not used: loading never fails because of it.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENV = "LABCTL_PLAN_CACHE"
#: smaller files read in well under a millisecond: a cache entry would not pay for its file
MIN_BYTES = 16 << 10
MAX_ENTRIES = 128
MAX_TOTAL_BYTES = 256 << 20
_MAGIC = b"labctl-yaml-cache 1\n"
_SUFFIX = ".marshal"
_MARSHAL_VERSION = 4
#: the modules whose code decides what data a text gives
_READERS = ("source.py", "yamlevents.py", "yamlguard.py", "bounds.py", "cache.py")


def cache_dir() -> Path | None:
    """The cache's folder, or None when ``$LABCTL_PLAN_CACHE`` is ``off``."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in ("off", "0", "no", "false"):
        return None
    try:
        if value:
            return Path(value).expanduser()
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base).expanduser() / "labctl" / "plans"
    except RuntimeError:  # no home to expand (a container's user without one): no cache
        return None


@functools.cache
def _code_stamp() -> bytes:
    """What identifies the reading code: labctl's, PyYAML's and Python's versions and the
    reader modules' sizes and modification times (a changed checkout is another key)."""
    import yaml

    from labctl import __version__

    here = Path(__file__).parent
    parts = [__version__, yaml.__version__, sys.version, str(_MARSHAL_VERSION)]
    for name in _READERS:
        try:
            st = (here / name).stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:?")
    return "\n".join(parts).encode()


def key(text: str, limits: Any, loader: Any) -> str:
    """The entry's name: SHA-256 of the code stamp, the limits, the loader and the text."""
    h = hashlib.sha256(_code_stamp())
    h.update(repr(limits).encode())
    h.update(f"{loader.__module__}.{loader.__qualname__}\n".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def lookup(text: str, limits: Any, loader: Any) -> tuple[bool, Any, str | None]:
    """``(found, data, key)``: the data kept for this text, if any. ``key`` (None when the
    text is not cached at all) is what :func:`keep` takes after a read."""
    if len(text) < MIN_BYTES:
        return False, None, None
    folder = cache_dir()
    if folder is None:
        return False, None, None
    name = key(text, limits, loader)
    path = folder / (name + _SUFFIX)
    try:
        blob = path.read_bytes()
    except OSError:
        return False, None, name
    data = _unpack(blob)
    if data is _DAMAGED:
        _remove(path)
        return False, None, name
    try:
        os.utime(path)  # recently used: pruned last
    except OSError:
        pass
    return True, data, name


_DAMAGED = object()


def _unpack(blob: bytes) -> Any:
    head = len(_MAGIC)
    if not blob.startswith(_MAGIC) or len(blob) < head + 32:
        return _DAMAGED
    digest, body = blob[head:head + 32], blob[head + 32:]
    if hashlib.sha256(body).digest() != digest:
        return _DAMAGED
    try:
        data = marshal.loads(body)
    except Exception:  # noqa: BLE001 - whatever an entry holds, it is a miss, never an error
        return _DAMAGED
    return data if _plain(data) else _DAMAGED


_SCALARS = (str, int, float, bool, type(None))


def _plain(data: Any) -> bool:
    """Only what a clean YAML read gives: dicts, lists, text, numbers, true/false and null
    (marshal can also make code, bytes and sets: an entry holding one was not written here)."""
    stack = [data]
    while stack:
        value = stack.pop()
        cls = value.__class__
        if cls is dict:
            for k in value:
                if k.__class__ not in _SCALARS:
                    return False
            stack.extend(value.values())
        elif cls is list:
            stack.extend(value)
        elif cls not in _SCALARS:
            return False
    return True


def keep(name: str | None, data: Any) -> None:
    """Keep ``data`` (a clean read of the text :func:`lookup` named) for the next read."""
    folder = cache_dir()
    if name is None or folder is None:
        return
    try:
        body = marshal.dumps(data, _MARSHAL_VERSION)
    except ValueError:  # a type marshal does not keep exactly (a date): not cached
        return
    if len(body) > MAX_TOTAL_BYTES // 4:
        return
    blob = _MAGIC + hashlib.sha256(body).digest() + body
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
            os.replace(tmp, folder / (name + _SUFFIX))  # whole or not at all, for any reader
        except BaseException:
            _remove(Path(tmp))
            raise
        _prune(folder)
    except OSError:
        return  # a read-only or full disk: no cache


#: a half-written entry older than this was left by a process that died while writing it
STALE_TMP_SECONDS = 3600


def _prune(folder: Path) -> None:
    """Remove the least recently used entries beyond the count and size limits, and what a
    process killed while writing an entry left behind."""
    entries = []
    now = time.time()
    for path in folder.glob("*" + _SUFFIX):
        try:
            st = path.stat()
        except OSError:
            continue
        if path.name.startswith(".tmp-"):
            if now - st.st_mtime > STALE_TMP_SECONDS:
                _remove(path)
            continue
        entries.append((st.st_mtime_ns, st.st_size, path))
    total = sum(size for _t, size, _p in entries)
    if len(entries) <= MAX_ENTRIES and total <= MAX_TOTAL_BYTES:
        return
    entries.sort()  # oldest use first
    while entries and (len(entries) > MAX_ENTRIES or total > MAX_TOTAL_BYTES):
        _t, size, path = entries.pop(0)
        _remove(path)
        total -= size


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
