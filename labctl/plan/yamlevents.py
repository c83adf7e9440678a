"""Build positioned data in one pass over the YAML *event* stream (the common, plain file).

Composing a node tree and then walking it costs about twice what reading libyaml's events
does. :func:`read_events` builds the data and the :class:`~labctl.plan.source.SourceMap`
straight from the events, counting values and nesting against the limits exactly as
:func:`labctl.plan.yamlguard.scan_events` does (same event, same error). Scalars are typed by
the plan loader's own resolver and, beyond text, null and true/false, by the same code as
the long way (:class:`~labctl.plan.source._Builder`).

Anything unusual gives up (``None``) before it is read: an anchor or alias (expansion is the
scan's business), an explicit tag on a list or mapping, a merge key, a key that is no
plain scalar or repeats, a key refused, a syntax error, a second document. The caller then
reads the file the long way (scan, compose, build), which words every such case.
"""

from __future__ import annotations

from typing import Any

from yaml import events as ev
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from labctl.errors import LabctlError
from labctl.plan import yamlguard
from labctl.plan.bounds import InputLimits
from labctl.plan.source import (
    _FAST_SCALARS,
    _MAP_TAGS,
    _QUOTES,
    _SEQ_TAGS,
    _SLOW,
    _YAML,
    Pos,
    SourceMap,
    _Builder,
    _new_pos,
)

_STR = _YAML + "str"
_SPECIAL_KEYS = (_YAML + "merge", _YAML + "value")  # the keys PyYAML's flatten_mapping rewrites
_SCALAR = ev.ScalarEvent
_MAPPING_START = ev.MappingStartEvent
_MAPPING_END = ev.MappingEndEvent
_SEQUENCE_START = ev.SequenceStartEvent
_SEQUENCE_END = ev.SequenceEndEvent
_STREAM_END = ev.StreamEndEvent
_MEMO_SIZE = 100_000


class _GiveUp(Exception):
    """This file is read the long way."""


def read_events(text: str, name: str, error_cls: type[LabctlError], limits: InputLimits,
                loader_cls: Any, *, positions: bool = True) -> tuple[Any, SourceMap, list[LabctlError]] | None:
    """``(data, source_map, errors)`` as :func:`labctl.plan.source.load_yaml` gives them, or
    None when the file needs the long way. Raises ``error_cls`` where a limit is crossed.

    ``positions=False``: the source map is left empty (the data, the errors, every limit and
    every refusal are the same); building a position for each key and value is most of what
    this reader costs beyond libyaml."""
    import yaml

    try:
        loader = loader_cls(text)  # PyYAML's own reader checks the characters here
    except yaml.YAMLError:
        return None
    try:
        reader = _Reader(loader, _Builder(name, error_cls, limits.max_digits), limits, positions)
        return reader.document()
    except (_GiveUp, yaml.YAMLError):
        return None
    finally:
        loader.dispose()


class _Reader:
    def __init__(self, loader: Any, builder: _Builder, limits: InputLimits, positions: bool = True) -> None:
        self.get = loader.get_event
        self.resolve = loader.resolve
        self.first_chars = loader._first_chars
        self.builder = builder
        self.file = builder.file
        self.positions = positions
        self.values = builder.smap.values
        self.keys = builder.smap.keys
        self.limits = limits
        self.max_nodes = limits.max_nodes
        self.nodes = 0
        self.depth = 0
        self.plain_tags: dict[str, str] = {}  # plain scalar -> its tag (a plan repeats its words)
        # what the resolver gives an untagged list or mapping (unless it resolves by path)
        self.collection_tags = None if loader.yaml_path_resolvers else {
            MappingNode: loader.DEFAULT_MAPPING_TAG, SequenceNode: loader.DEFAULT_SEQUENCE_TAG}

    def document(self) -> tuple[Any, SourceMap, list[LabctlError]]:
        get = self.get
        get()  # the stream's start
        if get().__class__ is _STREAM_END:
            return None, self.builder.smap, []
        data = self.node(get(), ())
        get()  # the document's end
        if get().__class__ is not _STREAM_END:
            raise _GiveUp  # a second document: the long way says so
        return data, self.builder.smap, self.builder.errors

    def count(self, event: Any) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise yamlguard.too_many(event, self.file, self.max_nodes, self.builder.error_cls)

    def tag(self, event: Any) -> str:
        """The scalar's tag, as the composer gives it."""
        tag = event.tag
        if tag is None:
            if not event.implicit[0]:
                return _STR  # quoted
            value = event.value
            if value and value[0] not in self.first_chars:
                return _STR
            tag = self.plain_tags.get(value)
            if tag is None:
                tag = self.resolve(ScalarNode, value, event.implicit)
                if len(self.plain_tags) < _MEMO_SIZE:
                    self.plain_tags[value] = tag
            return tag
        if tag == "!":
            return self.resolve(ScalarNode, event.value, event.implicit)
        return tag

    def typed(self, event: Any) -> Any:
        """The value of a scalar that may be other than text (its position is already kept)."""
        tag = self.tag(event)
        if tag == _STR:
            return event.value
        fast = _FAST_SCALARS.get(tag)
        if fast is not None:
            value = fast(event.value)
            if value is not _SLOW:
                return value
        return self.builder.scalar(ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))[1]

    def key(self, event: Any) -> Any:
        """The key a scalar that may be other than text makes (as the long way makes it)."""
        tag = self.tag(event)
        if tag == _STR:
            return event.value
        if tag in _SPECIAL_KEYS:
            raise _GiveUp
        ok, key = self.builder.scalar(ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))
        if not ok:
            raise _GiveUp
        if not isinstance(key, str | int | float | bool) or key is None:
            key = str(key)
        return key

    def node(self, event: Any, path: tuple[Any, ...]) -> Any:
        if event.anchor is not None or event.__class__ not in (_SCALAR, _MAPPING_START, _SEQUENCE_START):
            raise _GiveUp  # an anchor or an alias
        self.count(event)
        mark = event.start_mark
        if event.__class__ is _SCALAR:
            if self.positions:
                self.values[path] = _new_pos(Pos, (self.file, mark.line + 1, mark.column + 1, event.style in _QUOTES))
            return self.typed(event)
        if self.depth >= self.limits.max_depth:
            raise yamlguard.too_deep(event, self.file, self.limits.max_depth, self.builder.error_cls)
        tag = event.tag
        kind = MappingNode if event.__class__ is _MAPPING_START else SequenceNode
        if tag is None or tag == "!":
            tag = self.collection_tags[kind] if self.collection_tags else self.resolve(kind, None, event.implicit)
        if tag not in (_MAP_TAGS if kind is MappingNode else _SEQ_TAGS):
            raise _GiveUp  # refused where the long way words it
        if self.positions:
            self.values[path] = _new_pos(Pos, (self.file, mark.line + 1, mark.column + 1, False))
        self.depth += 1
        out = self.mapping(path) if kind is MappingNode else self.sequence(path)
        self.depth -= 1
        return out

    def sequence(self, path: tuple[Any, ...]) -> list[Any]:
        get = self.get
        node = self.node
        out: list[Any] = []
        positions = self.positions
        while True:
            event = get()
            if event.__class__ is _SEQUENCE_END:
                return out
            out.append(node(event, (*path, len(out)) if positions else path))

    def mapping(self, path: tuple[Any, ...]) -> dict[Any, Any]:
        """The hot loop: keys and scalar values that are plain text are read inline."""
        get = self.get
        file = self.file
        keys = self.keys
        values = self.values
        first = self.first_chars
        max_nodes = self.max_nodes
        positions = self.positions
        kpath = path  # without positions, no path is built
        out: dict[Any, Any] = {}
        while True:
            k = get()
            if k.__class__ is not _SCALAR or k.anchor is not None:
                if k.__class__ is _MAPPING_END:
                    return out
                raise _GiveUp  # a list, mapping, anchor or alias as a key
            self.nodes += 1
            if self.nodes > max_nodes:
                raise yamlguard.too_many(k, file, max_nodes, self.builder.error_cls)
            key = k.value
            if k.tag is not None or k.implicit[0] and (not key or key[0] in first):
                key = self.key(k)
            if key in out:
                raise _GiveUp  # a duplicate key: the long way words it
            if positions:
                kpath = (*path, key)
                mark = k.start_mark
                keys[kpath] = _new_pos(Pos, (file, mark.line + 1, mark.column + 1, k.style in _QUOTES))
            v = get()
            if v.__class__ is not _SCALAR or v.anchor is not None:
                out[key] = self.node(v, kpath)
                continue
            self.nodes += 1
            if self.nodes > max_nodes:
                raise yamlguard.too_many(v, file, max_nodes, self.builder.error_cls)
            if positions:
                mark = v.start_mark
                values[kpath] = _new_pos(Pos, (file, mark.line + 1, mark.column + 1, v.style in _QUOTES))
            value = v.value
            if v.tag is not None or v.implicit[0] and (not value or value[0] in first):
                value = self.typed(v)
            out[key] = value
