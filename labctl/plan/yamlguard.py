"""Read untrusted YAML within bounds: size, encoding, nesting, aliases, expanded size.

:func:`read_bounded` reads at most ``max_bytes + 1`` bytes and decodes them, locating a bad
byte or a control character. :func:`scan_events` walks the YAML *event* stream (libyaml's
parser when PyYAML has it, PyYAML's own otherwise) before anything is composed, and refuses
at the first event that crosses a limit:

- nesting deeper than ``max_depth`` (also counting what an alias brings in);
- more than ``max_aliases`` alias uses;
- an alias used inside the node it names (an alias loop);
- more than ``max_nodes`` values once every alias is expanded (billion laughs, alias bombs,
  merge-key bombs): each anchored node's expanded size is known when it ends, so an alias
  adds its full size at once, without expanding anything.

Only a stream that passed is composed, so composing and building the data are bounded too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from labctl.errors import LabctlError
from labctl.plan.bounds import (
    ENV_MAX_NODES,
    InputLimits,
    human_bytes,
    raise_hint,
    size_hint,
)


class YamlSyntaxStop(Exception):
    """The scan met a YAML syntax error (``error``): the caller reports it, or composes with
    PyYAML's own parser for its wording."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def check_text_size(text: str, name: str, limits: InputLimits, error_cls: type[LabctlError]) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise _too_big(size, name, limits, error_cls)


def _too_big(size: int | None, name: str, limits: InputLimits, error_cls: type[LabctlError]) -> LabctlError:
    shown = f"{size:,} bytes" if size is not None else "bigger"
    return error_cls(
        f"file too large: {shown}, more than the limit of {human_bytes(limits.max_bytes)} for a plan or fixture",
        file=name, line=1, column=1, hint=size_hint(size, limits),
    )


def read_bounded(path: str | Path, name: str, limits: InputLimits, error_cls: type[LabctlError]) -> str:
    """The file's text; errors for a missing, unreadable, too large or non-UTF-8 file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limits.max_bytes + 1)
            size = None
            if len(data) > limits.max_bytes:
                try:
                    size = Path(path).stat().st_size
                except OSError:
                    size = None
    except FileNotFoundError:
        raise error_cls(f"no such file: {name}", file=name, hint="check the path") from None
    except IsADirectoryError:
        raise error_cls(f"{name} is a directory, not a YAML file", file=name) from None
    except OSError as err:
        raise error_cls(f"cannot read {name}: {err.strerror}", file=name) from None
    if len(data) > limits.max_bytes:
        raise _too_big(size if size and size > limits.max_bytes else None, name, limits, error_cls)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        head = data[: err.start]
        line = head.count(b"\n") + 1
        column = len(head[head.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
        raise error_cls(
            f"not a text file: byte 0x{data[err.start]:02x} is not UTF-8 ({err.reason})",
            file=name, line=line, column=column,
            hint="plans and fixtures are UTF-8 text; is this the right file?",
        ) from None


def reader_error(err: Any, text: str, name: str, error_cls: type[LabctlError]) -> LabctlError:
    """A PyYAML/libyaml ``ReaderError`` (a control character) at its line and column."""
    position = int(getattr(err, "position", 0) or 0)
    line, column = _line_col(text, min(position, len(text)))
    char = getattr(err, "character", None)
    code = f"#x{char:04x}" if isinstance(char, int) else repr(char)
    return error_cls(
        f"not a text file: control character {code} is not allowed in YAML",
        file=name, line=line, column=column,
        hint="plans and fixtures are UTF-8 text; is this the right file?",
    )


def _at(event: Any, name: str, message: str, hint: str | None, error_cls: type[LabctlError]) -> LabctlError:
    mark = event.start_mark
    return error_cls(message, file=name, line=mark.line + 1, column=mark.column + 1, hint=hint)


def too_many(event: Any, name: str, max_nodes: int, error_cls: type[LabctlError]) -> LabctlError:
    """The error for the value (``event``) that is one more than ``max_nodes``."""
    return _at(event, name, f"too many values: more than the limit of {max_nodes:,}",
               raise_hint(ENV_MAX_NODES, max_nodes), error_cls)


def too_deep(event: Any, name: str, max_depth: int, error_cls: type[LabctlError]) -> LabctlError:
    """The error for the list or mapping (``event``) that opens one level more than ``max_depth``."""
    return _at(event, name, f"nested too deeply: more than {max_depth} levels of mappings and lists",
               "a plan is about 6 levels deep; flatten the structure", error_cls)


def scan_events(text: str, name: str, limits: InputLimits, error_cls: type[LabctlError], loader_cls: Any) -> None:
    """Walk the event stream and raise ``error_cls`` at the first event over a limit.

    Raises :class:`YamlSyntaxStop` on a YAML syntax error (the caller reports it).
    """
    import yaml
    from yaml import events as ev

    loader = loader_cls(text)
    # per open collection: [expanded size, expanded height below it, anchor]
    stack: list[list[Any]] = []
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (expanded size, height)
    total = aliases = 0

    def fail(event: Any, message: str, hint: str | None) -> LabctlError:
        return _at(event, name, message, hint, error_cls)

    def finished(size: int, height: int, anchor: str | None) -> None:
        if anchor is not None:
            sizes[anchor] = (size, height)
        if stack:
            stack[-1][0] += size
            stack[-1][1] = max(stack[-1][1], height + 1)

    scalar_event = ev.ScalarEvent
    max_nodes = limits.max_nodes
    try:
        while loader.check_event():
            event = loader.get_event()
            if event.__class__ is scalar_event and event.anchor is None and stack:
                # the common case, inline: a plain value inside a collection
                total += 1
                if total > max_nodes:
                    raise too_many(event, name, max_nodes, error_cls)
                top = stack[-1]
                top[0] += 1
                if top[1] < 1:
                    top[1] = 1
                continue
            if isinstance(event, ev.ScalarEvent | ev.CollectionStartEvent):
                total += 1
                if total > max_nodes:
                    raise too_many(event, name, max_nodes, error_cls)
                if isinstance(event, ev.ScalarEvent):
                    finished(1, 0, event.anchor)
                    continue
                if len(stack) >= limits.max_depth:
                    raise too_deep(event, name, limits.max_depth, error_cls)
                stack.append([1, 0, event.anchor])
            elif isinstance(event, ev.CollectionEndEvent):
                size, height, anchor = stack.pop()
                finished(size, height, anchor)
            elif isinstance(event, ev.AliasEvent):
                aliases += 1
                if aliases > limits.max_aliases:
                    raise fail(event, f"too many aliases: more than the limit of {limits.max_aliases:,} "
                               "uses of *name", "a plan needs a handful; write the values out")
                if any(entry[2] == event.anchor for entry in stack):
                    raise fail(event, f"alias loop: *{event.anchor} is used inside the node &{event.anchor} "
                               "it refers to", "an alias must refer to a node that is complete")
                size, height = sizes.get(event.anchor, (1, 0))
                if len(stack) + height > limits.max_depth:
                    raise fail(event, f"nested too deeply: *{event.anchor} here makes more than "
                               f"{limits.max_depth} levels of mappings and lists", None)
                total += size
                if total > limits.max_nodes:
                    raise fail(event, f"too many values once aliases are expanded: *{event.anchor} brings "
                               f"the total past the limit of {limits.max_nodes:,} (an alias bomb?)",
                               raise_hint(ENV_MAX_NODES, limits.max_nodes))
                finished(size, height, None)
    except yaml.reader.ReaderError as err:
        raise reader_error(err, text, name, error_cls) from None
    except yaml.YAMLError as err:
        raise YamlSyntaxStop(err) from None
    finally:
        loader.dispose()
