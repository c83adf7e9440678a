"""YAML with positions: every key and value of a document mapped to ``file:line:col``.

PyYAML's composer gives nodes with start marks; :func:`load_yaml` builds plain Python data
from them and a :class:`SourceMap` from *paths* (``("steps", 3, "limits", "max")``, the same
shape as a pydantic error's ``loc``) to positions. Plan and fixture loaders use it to report
every problem where it is, and :func:`pydantic_errors` turns a pydantic ``ValidationError``
into located labctl errors with "did you mean" hints.
"""

from __future__ import annotations

import difflib
import math
import re
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from labctl.errors import LabctlError, PlanError
from labctl.plan.bounds import InputLimits
from labctl.plan.wording import explain

Path_ = tuple[Any, ...]


class Pos(NamedTuple):
    """A 1-based position in a file; ``quoted`` tells whether the scalar there is quoted.

    A named tuple: a plan of 10,000 steps holds a few hundred thousand of them."""

    file: str
    line: int
    column: int
    quoted: bool = False

    def shifted(self, offset: int) -> Pos:
        """The position ``offset`` characters into the scalar (inside its quotes)."""
        return Pos(self.file, self.line, self.column + offset + (1 if self.quoted else 0))


class SourceMap:
    """Positions of keys and values by path; one map can span several files (includes).

    A map may be filled *later* (:meth:`later`): the plain file's first read builds only the
    data, and its positions are read from the same text the first time anyone asks for one,
    which is only ever to word a problem. A long plan that is right (the common case) never
    pays for a position per key and value."""

    __slots__ = ("_values", "_keys", "files", "_fill", "_filling")

    def __init__(self, values: dict[Path_, Pos] | None = None, keys: dict[Path_, Pos] | None = None,
                 files: list[str] | None = None) -> None:
        self._values: dict[Path_, Pos] = values if values is not None else {}
        self._keys: dict[Path_, Pos] = keys if keys is not None else {}
        self.files: list[str] = files if files is not None else []
        self._fill: Callable[[], SourceMap] | None = None
        self._filling: threading.Lock | None = None

    def later(self, fill: Callable[[], SourceMap]) -> None:
        """Take the positions from ``fill()`` when the first one is wanted."""
        self._filling = threading.Lock()  # (two threads wording errors at once fill it once)
        self._fill = fill

    def _filled(self) -> None:
        """(Nothing is written into a map before it is filled: every writer goes through
        ``values`` / ``keys``, which fill it first; its file is the one read again.)"""
        with self._filling:  # type: ignore[union-attr]  # set by later(), with _fill
            fill = self._fill
            if fill is None:
                return  # another thread filled it meanwhile
            try:
                got = fill()
                self._values, self._keys = got._values, got._keys
            finally:
                self._fill = None  # (set last: a reader sees no map before it is whole)

    @property
    def values(self) -> dict[Path_, Pos]:
        if self._fill is not None:
            self._filled()
        return self._values

    @property
    def keys(self) -> dict[Path_, Pos]:
        if self._fill is not None:
            self._filled()
        return self._keys

    def __repr__(self) -> str:
        return f"SourceMap({len(self.values)} values, {len(self.keys)} keys, files={self.files!r})"

    def value(self, path: Iterable[Any]) -> Pos | None:
        return self.values.get(tuple(path))

    def key(self, path: Iterable[Any]) -> Pos | None:
        return self.keys.get(tuple(path))

    def nearest(self, path: Iterable[Any], *, key: bool = False) -> tuple[Pos | None, Path_]:
        """The position of the longest prefix of ``path`` that is in the map.

        Path elements that are not in the document (pydantic adds union tags such as
        ``function-after[...]``) are skipped. With ``key=True`` the key's position is
        preferred (for unknown keys); otherwise the value's.
        """
        parts = tuple(p for p in path if not (p == "*" or _is_union_tag(p)))
        found: Path_ = ()
        for n in range(len(parts), 0, -1):
            if parts[:n] in self.values or parts[:n] in self.keys:
                found = parts[:n]
                break
        if key and found in self.keys:
            return self.keys[found], found
        return self.values.get(found) or self.keys.get(found), found

    def graft(self, other: SourceMap, at: Path_, src: Path_ = ()) -> None:
        """Copy ``other``'s positions under ``src`` to live under ``at`` here."""
        n = len(src)
        for table_from, table_to in ((other.values, self.values), (other.keys, self.keys)):
            for p, pos in table_from.items():
                if p[:n] == src:
                    table_to[at + p[n:]] = pos
        for f in other.files:
            if f not in self.files:
                self.files.append(f)


_LOADERS: dict[str, Any] = {}


def _loader(fast: bool = False) -> Any:
    """A SafeLoader with YAML 1.2 booleans: only true/false are booleans, so ``on``, ``off``,
    ``yes`` and ``no`` stay text (``value: off`` means the word, as the engineer wrote it).

    ``fast=True``: the same rules on libyaml's parser (when PyYAML has it), used to scan and
    compose files that parse cleanly; PyYAML's own parser words the syntax errors.
    """
    import yaml

    key = "fast" if fast and getattr(yaml, "__with_libyaml__", False) else "python"
    if key not in _LOADERS:
        base = yaml.CSafeLoader if key == "fast" else yaml.SafeLoader

        class PlanLoader(base):  # type: ignore[valid-type, misc]
            _memo: dict[Any, str] | None = None
            _first_chars: Any = frozenset()

            def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
                # plans repeat their values (check names, roles, units): resolve each once per file
                if kind is not yaml.ScalarNode or self.yaml_path_resolvers:
                    return super().resolve(kind, value, implicit)
                if not implicit[0] or value and value[0] not in self._first_chars:
                    return _YAML + "str"  # quoted, or no implicit type starts with this character
                if self._memo is None:
                    self._memo = {}
                key = (value, implicit)
                tag = self._memo.get(key)
                if tag is None:
                    tag = super().resolve(kind, value, implicit)
                    if len(self._memo) < 100_000:
                        self._memo[key] = tag
                return tag

        PlanLoader.yaml_implicit_resolvers = {
            ch: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:bool", _YAML + "int")]
            for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        # YAML 1.2 integers: 010 is ten (YAML 1.1 read it as octal 8), 0o10 is octal, 0x1F hex;
        # 1_000, 0b101 and 1:30 are text (as in YAML 1.2), read by the plan's own number rules
        PlanLoader.add_implicit_resolver(_YAML + "int", _YAML12_INT, list("-+0123456789"))
        PlanLoader.add_implicit_resolver(
            "tag:yaml.org,2002:bool",
            re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
            list("tTfF"),
        )
        # None: resolvers for any first character (PyYAML has none; a value could have one)
        PlanLoader._first_chars = (frozenset(PlanLoader.yaml_implicit_resolvers)
                                   if None not in PlanLoader.yaml_implicit_resolvers else _EVERY_CHAR)
        _LOADERS[key] = PlanLoader
    return _LOADERS[key]


_YAML = "tag:yaml.org,2002:"
#: the only tags a plan or fixture may hold (implicit or written out), per kind of node
_SCALAR_TAGS = {_YAML + t for t in ("null", "bool", "int", "float", "str", "timestamp")}
_SEQ_TAGS = {_YAML + "seq"}
_MAP_TAGS = {_YAML + "map"}


_QUOTES = ("'", '"')
_new_pos = tuple.__new__  # Pos without the named tuple's own __new__ (one call less per node)


class _EveryChar:
    def __contains__(self, ch: object) -> bool:
        return True


_EVERY_CHAR = _EveryChar()
_SLOW = object()
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_YAML12_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_PLAIN_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})").fullmatch
_PLAIN_FLOAT = re.compile(r"[-+]?[0-9]{1,17}\.[0-9]{0,17}(?:[eE][-+]?[0-9]{1,3})?").fullmatch


def _fast_int(v: str) -> Any:
    """A plain decimal integer of at most 18 digits (no 0-led octal, ``0x``, ``_`` or ``1:30``,
    which PyYAML's constructor reads its own way): what the constructor makes of it."""
    return int(v) if _PLAIN_INT(v) else _SLOW


def _int12(v: str) -> int:
    """A YAML 1.2 integer: decimal (leading zeros are no octal), ``0o`` octal or ``0x`` hex."""
    if v[:2] == "0o":
        return int(v[2:], 8)
    if v[:2] == "0x":
        return int(v[2:], 16)
    return int(v, 10)


def _fast_float(v: str) -> Any:
    """A plain decimal float, as the constructor reads it; a non-finite one (``1.0e999``) goes
    the long way, which refuses it."""
    if not _PLAIN_FLOAT(v):
        return _SLOW
    value = float(v)
    return value if math.isfinite(value) else _SLOW


#: scalars built without PyYAML's constructor (the common tags, in their common spellings)
_FAST_SCALARS: dict[str, Any] = {
    _YAML + "str": lambda v: v,
    _YAML + "null": lambda v: None if v in ("", "~", "null", "Null", "NULL") else _SLOW,
    _YAML + "bool": lambda v: _BOOLS.get(v, _SLOW),
    _YAML + "int": _fast_int,
    _YAML + "float": _fast_float,
}


def _tag_text(tag: str) -> str:
    return "!!" + tag[len(_YAML):] if tag.startswith(_YAML) else tag


class _Builder:
    def __init__(self, file: str, error_cls: type[LabctlError], max_digits: int) -> None:
        import yaml

        self.file = file
        self.error_cls = error_cls
        self.max_digits = max_digits
        self.smap = SourceMap(files=[file])
        self.errors: list[LabctlError] = []
        self.constructor = yaml.constructor.SafeConstructor()
        self.yaml = yaml

    def pos(self, node: Any) -> Pos:
        style = getattr(node, "style", None)
        return Pos(self.file, node.start_mark.line + 1, node.start_mark.column + 1, style in ("'", '"'))

    def scalar(self, node: Any) -> tuple[bool, Any]:
        """``(ok, value)`` of a scalar node: known tags only, numbers of sensible size."""
        if node.tag not in _SCALAR_TAGS:
            self._error(f"YAML tag {_tag_text(node.tag)} is not allowed", node,
                        hint="plans and fixtures hold plain data: text, numbers, true/false, dates; remove the tag")
            return False, None
        if node.tag in (_YAML + "int", _YAML + "float"):
            digits = sum(c.isdigit() for c in node.value)
            if digits > self.max_digits:
                self._error(f"number too long: {digits:,} digits, more than the limit of {self.max_digits}",
                            node, hint="a measurement needs a few significant digits; use an exponent, e.g. 1.5e9")
                return False, None
        try:
            if node.tag == _YAML + "int" and _YAML12_INT.match(node.value):
                value = _int12(node.value)  # PyYAML's constructor reads 010 as octal (YAML 1.1)
            else:
                value = self.constructor.construct_object(node, deep=True)
        except (self.yaml.YAMLError, ValueError, OverflowError) as err:
            self._error(f"bad value: {getattr(err, 'problem', None) or err}", node)
            return False, None
        if isinstance(value, float) and not math.isfinite(value):
            self._error(f"{node.value!r} is not a finite number", node,
                        hint="infinity and NaN are not values a plan can measure or set")
            return False, None
        return True, value

    def build(self, node: Any, path: Path_) -> Any:
        yaml = self.yaml
        mark = node.start_mark
        if node.__class__ is yaml.ScalarNode:
            self.smap.values[path] = _new_pos(Pos, (self.file, mark.line + 1, mark.column + 1, node.style in _QUOTES))
            fast = _FAST_SCALARS.get(node.tag)
            if fast is not None:
                value = fast(node.value)
                if value is not _SLOW:
                    return value
            return self.scalar(node)[1]
        self.smap.values[path] = _new_pos(Pos, (self.file, mark.line + 1, mark.column + 1, False))
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)[1]
        if isinstance(node, yaml.SequenceNode):
            if node.tag not in _SEQ_TAGS:
                self._error(f"YAML tag {_tag_text(node.tag)} is not allowed on a list", node,
                            hint="plans and fixtures hold plain data; remove the tag")
                return None
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            if node.tag not in _MAP_TAGS:
                self._error(f"YAML tag {_tag_text(node.tag)} is not allowed on a mapping", node,
                            hint="plans and fixtures hold plain data; remove the tag")
                return None
            try:
                self.constructor.flatten_mapping(node)  # YAML merge keys (<<: *anchor)
            except yaml.YAMLError as err:
                self._error(f"bad merge key: {getattr(err, 'problem', err)}", node)
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    self._error("a key must be a plain word, not a list or mapping", key_node)
                    continue
                if key_node.tag == _YAML + "str":
                    key = key_node.value
                else:
                    ok, key = self.scalar(key_node)
                    if not ok:
                        continue
                if not isinstance(key, str | int | float | bool) or key is None:
                    key = str(key)
                if key in out:
                    first = self.smap.keys[(*path, key)]
                    self._error(
                        f"duplicate key {_short(key)} (first defined at line {first.line})",
                        key_node,
                        hint="YAML keeps only the last one; remove or rename one of them",
                    )
                    continue
                kpath = (*path, key)
                kmark = key_node.start_mark
                self.smap.keys[kpath] = _new_pos(Pos, (self.file, kmark.line + 1, kmark.column + 1,
                                                       key_node.style in _QUOTES))
                out[key] = self.build(value_node, kpath)
            return out
        return None  # pragma: no cover - yaml has no other node kinds

    def _error(self, message: str, node: Any, hint: str | None = None) -> None:
        p = self.pos(node)
        err = self.error_cls(message, file=p.file, line=p.line, column=p.column, hint=hint)
        err.refused_value = True  # type: ignore[attr-defined]  # see drop_followups
        self.errors.append(err)


def drop_followups(errors: list[LabctlError]) -> list[LabctlError]:
    """Without the errors that only follow from a value the YAML reader refused (a refused tag
    or number reads as nothing, so "expected text, got None" at the same place is noise)."""
    refused = {(e.file, e.line, e.column) for e in errors if getattr(e, "refused_value", False)}
    return [e for e in errors if getattr(e, "refused_value", False) or (e.file, e.line, e.column) not in refused]


def _short(value: Any, width: int = 60) -> str:
    """``repr(value)``, cut to ``width`` characters (an error line stays one readable line)."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


#: up to this size a YAML syntax error is worded by PyYAML's parser (as labctl always has);
#: in a larger file libyaml's message is given as it is, to answer in well under a second
_WORDED_ERRORS_UP_TO = 64 << 10


def load_yaml(
    path: str | Path,
    *,
    error_cls: type[LabctlError] = PlanError,
    text: str | None = None,
    display: str | None = None,
    limits: InputLimits | None = None,
) -> tuple[Any, SourceMap, list[LabctlError]]:
    """Read one YAML document with positions, within :mod:`labctl.plan.bounds`.

    Returns ``(data, source_map, errors)``; ``errors`` holds non-fatal problems (duplicate
    keys, refused tags and numbers). Unreadable, too large and binary files, YAML syntax
    errors and crossed limits raise ``error_cls`` located at the problem.

    A file's positions are read when the first one is wanted (:meth:`SourceMap.later`);
    includes splice them lazily too (``labctl.plan.includes``).
    """
    from labctl.plan import cache, yamlevents, yamlguard

    limits = limits or InputLimits.from_env()
    name = display or str(path)
    if text is None:
        text = yamlguard.read_bounded(path, name, limits, error_cls)
    else:
        yamlguard.check_text_size(text, name, limits, error_cls)
    fast = _loader(fast=True)
    found, data, entry = cache.lookup(text, limits, fast)  # a large file read before (labctl.plan.cache)
    if found:
        read: tuple[Any, SourceMap, list[LabctlError]] | None = (data, SourceMap(files=[name]), [])
    else:
        read = yamlevents.read_events(text, name, error_cls, limits, fast, positions=False)
        if read is None:
            return _long_way(text, name, error_cls, limits, fast)
        if entry is not None and not read[2]:
            cache.keep(entry, read[0])
    read[1].later(lambda: _positions(text, name, error_cls, limits))  # read from the same text when wanted
    return read


def _positions(text: str, name: str, error_cls: type[LabctlError], limits: InputLimits) -> SourceMap:
    """The positions of a plain file read without them (the same text, read again)."""
    from labctl.plan import yamlevents

    fast = _loader(fast=True)
    try:
        read = yamlevents.read_events(text, name, error_cls, limits, fast)
        if read is None:  # (it read the first time: the same text reads again)
            read = _long_way(text, name, error_cls, limits, fast)
    except LabctlError:
        return SourceMap(files=[name])
    return read[1]


def _long_way(text: str, name: str, error_cls: type[LabctlError], limits: InputLimits,
              fast: Any) -> tuple[Any, SourceMap, list[LabctlError]]:
    """Scan (limits, syntax), compose and build: every file the event path gives up on."""
    import yaml

    from labctl.plan import yamlguard

    syntax: Exception | None = None
    try:
        yamlguard.scan_events(text, name, limits, error_cls, fast)
    except yamlguard.YamlSyntaxStop as stop:
        syntax = stop.error
    if syntax is not None and fast is not _loader() and len(text) <= _WORDED_ERRORS_UP_TO:
        try:  # scan again with the parser that words the error better, up to that error
            yamlguard.scan_events(text, name, limits, error_cls, _loader())
            syntax = None  # PyYAML takes what libyaml did not: compose with PyYAML
        except yamlguard.YamlSyntaxStop:
            pass
        fast = _loader()
    loader = fast(text)
    try:
        if syntax is not None and fast is not _loader():
            raise syntax  # a large file: libyaml's own words, without a slow second parse
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        hint = _yaml_hint(problem, text, mark)
        raise error_cls(
            f"bad YAML: {problem}",
            file=name,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
            hint=hint,
        ) from None
    except yaml.reader.ReaderError as err:
        raise yamlguard.reader_error(err, text, name, error_cls) from None
    except yaml.YAMLError as err:
        raise error_cls(f"bad YAML: {err}", file=name, line=1, column=1) from None
    finally:
        loader.dispose()
    builder = _Builder(name, error_cls, limits.max_digits)
    if node is None:
        return None, builder.smap, []
    data = builder.build(node, ())
    return data, builder.smap, builder.errors


def _yaml_hint(problem: str, text: str, mark: Any) -> str:
    if "\t" in text and "tab" in problem.lower() or "found character '\\t'" in problem:
        return "YAML indentation uses spaces, never tabs"
    line = text.splitlines()[mark.line] if mark and mark.line < len(text.splitlines()) else ""
    if "${" in line and ("{" in problem or "'{'" in problem or "expected ','" in problem):
        return "quote values that hold ${...} inside [ ] or { }, e.g. voltage: \"${vin}\""
    if "mapping values are not allowed" in problem:
        return "a value containing ': ' must be quoted, or a key is indented wrongly"
    if "expected <block end>" in problem or "did not find expected" in problem:
        return "check the indentation of this line against the lines above it"
    return "fix the YAML syntax at this position"


# ------------------------------------------------------------------------------------------
# pydantic errors -> located labctl errors


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to ``word`` ("did you mean"), if any is close enough."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return close[0] if close else None


def _model_at(model: Any, loc: tuple[Any, ...]) -> Any:
    """The pydantic model whose fields hold the last element of ``loc`` (for "did you mean").

    Walks ``loc`` through the model's fields; list indexes and mapping keys (a parameter's
    name, a measurement's name) keep the walk in the model that the list or mapping holds.
    """
    from pydantic import BaseModel

    current = model
    for part in loc[:-1]:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field_info = current.model_fields.get(part) if isinstance(part, str) else None
        if field_info is not None:
            current = _first_model(field_info.annotation) or current
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _first_model(tp: Any) -> Any:
    """The first pydantic model inside a type (``list[Step]``, ``dict[str, Limit] | None`` …)."""
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in get_args(tp):
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def pydantic_errors(
    err: Any,
    smap: SourceMap,
    *,
    prefix: Path_ = (),
    model: Any = None,
    error_cls: type[LabctlError] = PlanError,
    what: str = "",
) -> list[LabctlError]:
    """Turn a pydantic ``ValidationError`` into located errors.

    ``prefix`` is where the validated object sits in the document (a step's args are
    validated on their own, at ``("steps", 3, "args")``). ``model`` (the validated class)
    lets unknown keys get a "did you mean" from its field names.
    """
    out: list[LabctlError] = []
    seen: set[tuple[Any, ...]] = set()
    for e in err.errors(include_url=False):
        loc = tuple(p for p in e["loc"] if not _is_union_tag(p))
        full = (*prefix, *loc)
        etype = e["type"]
        ctx = e.get("ctx") or {}
        hint = ctx.get("hint")
        if etype == "extra_forbidden":
            pos, _ = smap.nearest(full, key=True)
            key = loc[-1] if loc else "?"
            owner = _model_at(model, loc) if model is not None else None
            fields = [
                (f.alias or n) for n, f in owner.model_fields.items()
            ] if owner is not None else []
            close = suggest(str(key), fields)
            container = _container(loc, what)
            where = f" in {container}" if container else ""
            msg = f"unknown key {key!r}{where}"
            if close:
                msg += f"; did you mean {close!r}?"
            hint = "allowed keys: " + ", ".join(fields) if fields else None
        elif etype == "missing":
            pos, found = smap.nearest(full[:-1], key=True)
            container = _container(loc, what)
            msg = f"missing required key {loc[-1]!r}" + (f" in {container}" if container else "")
            hint = hint or f"add {loc[-1]}: " + (f"to {container}" if container else "")
        else:
            pos, at = smap.nearest(full)
            msg, wanted = explain(e)
            if etype in ("value_error", "assertion_error", "labctl"):
                pos = _named_key(msg, smap, at) or pos
            words = [str(p) for p in loc if not isinstance(p, int) and p != "*"]
            field_name = words[-1] if words else what
            if field_name and etype not in ("value_error", "assertion_error", "labctl"):
                msg = f"{field_name}: {msg}"
            elif etype == "labctl" and ctx.get("prefix_field") and field_name:
                msg = f"{field_name}: {msg}"
            hint = hint or wanted
        key_ = (pos, msg)
        if key_ in seen:
            continue
        seen.add(key_)
        out.append(
            error_cls(
                msg,
                file=pos.file if pos else (smap.files[0] if smap.files else None),
                line=pos.line if pos else None,
                column=pos.column if pos else None,
                hint=hint,
            )
        )
    return out


def _named_key(message: str, smap: SourceMap, at: Path_) -> Pos | None:
    """Where the first key under ``at`` that ``message`` names is written: a rule across
    keys (``gap_min (10 ms) is larger than gap_max``, ``nominal needs tol``) is reported at
    the value it names first, not at the mapping (``args:``, the limit) that holds them."""
    values = smap.values
    for word in re.findall(r"[A-Za-z_]\w*", message):
        pos = values.get((*at, word))
        if pos is not None:
            return pos
    return None


def _container(loc: tuple[Any, ...], what: str) -> str:
    """What holds the key at ``loc``: ``this step``, ``limits``, ``args of power.rails`` …"""
    parents = [p for p in loc[:-1] if p != "*"]
    if len(parents) >= 2 and parents[0] in ("setup", "steps", "teardown") and isinstance(parents[1], int) and len(parents) == 2:
        return "this step"
    words = [str(p) for p in parents if not isinstance(p, int)]
    return words[-1] if words else what


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        "[" in part or part in ("str", "int", "float", "bool", "list", "dict", "none", "Quantity")
        or part.startswith("function-")
    )
