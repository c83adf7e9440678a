"""JSON written as it is made, laid out for people and for ``grep``: the one writer of the JSON
export (``report -F json``) and of the reading commands' ``--format json``.

A :class:`Laid` object is written a key per line, indented by two; a list of objects (or an
iterator, made as it is written: a run's steps one at a time) an element per line; a
:class:`Part` as the text it makes itself; every other value on one line, by ``encode`` (a
``json.JSONEncoder(...).encode``: without indent, the C encoder). Nothing is ever one string
or one tree of values whole, however long the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


class Laid(dict):  # type: ignore[type-arg]
    """An object written a key per line."""


class Part:
    """A value that writes its own text (at the indentation it is given)."""

    __slots__ = ()

    def json_text(self, pad: str) -> str:
        raise NotImplementedError


def write(out: Callable[[str], Any], value: Any, encode: Callable[[Any], str], pad: str = "") -> None:
    """``value`` at the indentation ``pad``, its first line already started by the caller."""
    if isinstance(value, Part):
        out(value.json_text(pad))
    elif isinstance(value, Laid):
        inner = pad + "  "
        sep = "{\n"
        for key, item in value.items():
            out(f"{sep}{inner}{encode(str(key))}: ")
            write(out, item, encode, inner)
            sep = ",\n"
        out(f"\n{pad}}}" if sep == ",\n" else "{}")
    elif isinstance(value, Iterator) or isinstance(value, list | tuple) and value and isinstance(value[0], dict):
        inner = pad + "  "
        sep = "[\n"
        for item in value:
            out(f"{sep}{inner}")
            write(out, item, encode, inner)
            sep = ",\n"
        out(f"\n{pad}]" if sep == ",\n" else "[]")
    else:
        out(encode(value))
