"""Driver profiles: one YAML file per instrument model in ``drivers/``, validated by pydantic.

See docs/drivers.md for the format. ``load_profile("keysight-e36312a")`` finds
``drivers/keysight-e36312a.yaml`` (in a checkout or an installed wheel), validates it and
checks that it offers what its roles need; a bad profile is one :class:`ProfileError` line
naming the file.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from labctl.errors import FixtureError
from labctl.instruments.roles import REQUIREMENTS, ROLE_TYPES

ParserName = Literal["float", "int", "bool", "enum", "str", "csv", "regex", "kv", "block", "table", "records", "lines"]
ItemType = Literal["float", "int", "str", "bool"]


def _check_regex(value: str) -> str:
    try:
        re.compile(value)
    except re.error as err:
        raise ValueError(f"bad regular expression {value!r}: {err}") from None
    return value


Regex = Annotated[str, AfterValidator(_check_regex)]


class ProfileError(FixtureError):
    """A driver profile is missing or malformed (exit code 4, like a bad fixture)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Identity(_Strict):
    """How the instrument says who it is. ``manufacturer``/``model`` are regexes (full match,
    case-insensitive) on the fields of a comma-separated ``*IDN?`` reply, or on the named
    groups of ``pattern`` for instruments that answer differently."""

    query: str = "*IDN?"
    manufacturer: Regex | None = None
    model: Regex
    pattern: Regex | None = Field(None, description="regex with groups manufacturer/model/serial/firmware")



class TransportDefaults(_Strict):
    kind: Literal["auto", "visa", "serial"] = "auto"
    read_termination: str = "\n"
    write_termination: str = "\n"
    timeout: float = Field(2.0, gt=0, description="seconds, unless the fixture sets one")
    port: int | None = Field(None, description="usual TCP port (documentation)")
    baud_rate: int | None = None
    init: list[str] = Field(default_factory=list, description="commands written after every open")
    echo: bool = Field(False, description="the instrument echoes each command line first")
    reply_end: Regex | None = Field(
        None, description="regex of the line that ends every reply (e.g. '^OK$|^ERR'); "
        "then every command, query or not, is answered by lines up to that one")
    reply_error: Regex | None = Field(None, description="regex of an end line that reports an error; group 1 = message")
    max_reply_lines: int = Field(200, ge=1)
    reply_budget: float | None = Field(
        None, gt=0, description="seconds a whole multi-line reply may take (default 3 x the timeout)")


class ErrorQueue(_Strict):
    style: Literal["scpi", "bitmask", "none"] = "scpi"
    query: str = "SYST:ERR?"
    max_reads: int = Field(25, ge=1, le=1000)
    clear: str | None = Field(None, description="bitmask style: command that clears the word after a read")
    bits: dict[int, str] = Field(default_factory=dict, description="bitmask style: bit value -> meaning")
    ignore: int = Field(0, description="bitmask style: bits that are not errors (e.g. 129 = OPC|PON of *ESR?)")


class Channels(_Strict):
    ids: list[str] = Field(default_factory=list, description="channel ids; empty = any id matching `accept`")
    accept: Regex = Field(r"[\w.+-]+", description="regex a channel id must match")
    format: str = Field("{id}", description="how {ch} is written in templates")
    list_format: str = Field("{ids}", description="how {chs} (several channels) is written")
    list_separator: str = ","
    default: str | None = Field(None, description="channel used when a role call names none")

    @field_validator("ids", mode="before")
    @classmethod
    def _as_str(cls, v: Any) -> Any:
        return [str(x) for x in v] if isinstance(v, list) else v


class Property(_Strict):
    doc: str = ""
    get: str | None = None
    set: str | list[str] | None = Field(None, description="template, or several written in order")
    parse: ParserName = "str"
    item: ItemType = "float"
    values: dict[str, Any] | None = Field(None, description="wire word -> value (enum/bool; float: words that "
                                          "stand for a value, e.g. the no-data dashes of a BER: .nan)")
    pattern: Regex | None = None
    mask: int | None = Field(None, description="int reply & mask -> bool")
    scale: float | None = None
    invalid_above: float | None = Field(None, description="readings above this are overload/invalid")
    overload_ok: bool = Field(False, description="a 9.9E37 reply (SCPI overload/not-a-number) is a value here, "
                              "e.g. a BER with no bit compared; otherwise it is a reply error")
    range: list[float] | dict[str, list[float]] | None = None
    unit: str | None = None

    @model_validator(mode="after")
    def _check(self) -> Property:
        if self.get is None and self.set is None:
            raise ValueError("a property needs a `get` or a `set` template")
        if self.parse == "enum" and not self.values:
            raise ValueError("parse: enum needs `values`")
        if self.parse in ("regex", "records") and not self.pattern:
            raise ValueError(f"parse: {self.parse} needs `pattern`")
        for rng in ([self.range] if isinstance(self.range, list) else (self.range or {}).values()):
            if len(rng) != 2 or rng[0] > rng[1]:
                raise ValueError(f"range must be [min, max], got {rng}")
        for t in [self.get, *(self.set if isinstance(self.set, list) else [self.set])]:
            _check_template(t)
        return self

    def limits(self, channel: str | None) -> tuple[float, float] | None:
        if isinstance(self.range, list):
            return (self.range[0], self.range[1])
        if isinstance(self.range, dict):
            rng = self.range.get(str(channel)) if channel is not None else None
            return (rng[0], rng[1]) if rng else None
        return None

    def outside(self, number: float, channel: str | None) -> str | None:
        """The range ``number`` is outside of on ``channel`` (``0..5.15 A``), None when it fits
        (or the property has no range there): what the instrument would refuse."""
        limits = self.limits(channel)
        if limits is None or limits[0] <= number <= limits[1]:
            return None
        return f"{limits[0]:g}..{limits[1]:g}" + (f" {self.unit}" if self.unit else "")


class Action(_Strict):
    doc: str = ""
    commands: list[str] = Field(description="templates written in order; one ending in '?' is queried")
    parse: ParserName | None = None
    item: ItemType = "float"
    pattern: str | None = None
    values: dict[str, Any] | None = None

    @field_validator("commands", mode="before")
    @classmethod
    def _one(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _check(self) -> Action:
        for t in self.commands:
            _check_template(t)
        return self


class SafeAction(_Strict):
    """One safe-state action: commands to send, then properties read back to confirm it.

    ``send`` templates with ``{ch}``/``{id}`` are sent once per channel; a ``verify``
    property whose ``get`` has ``{ch}``/``{id}`` is read back on every channel. An expected
    value may be a template (``"{ambient}"``), filled from the profile's variables.
    """

    send: list[str] = Field(min_length=1, description="commands written in order")
    verify: dict[str, Any] = Field(default_factory=dict, description="property -> value it must read back")
    tolerance: float = Field(0.0, ge=0, description="absolute tolerance of a numeric read-back")

    @field_validator("send", mode="before")
    @classmethod
    def _one(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _check(self) -> SafeAction:
        for t in self.send:
            _check_template(t)
        return self


RoleName = Literal[tuple(ROLE_TYPES)]  # type: ignore[valid-type]


class Profile(_Strict):
    name: str
    manufacturer: str
    model: str
    description: str = ""
    roles: list[RoleName] = Field(min_length=1)
    identity: Identity
    transport: TransportDefaults = Field(default_factory=TransportDefaults)
    errors: list[ErrorQueue] = Field(default_factory=lambda: [ErrorQueue()], description="one source or several")
    channels: Channels = Field(default_factory=Channels)
    defaults: dict[str, Any] = Field(default_factory=dict, description="template variables (fixture options override)")
    properties: dict[str, Property] = Field(default_factory=dict)
    actions: dict[str, Action] = Field(default_factory=dict)
    safe_state: list[SafeAction] = Field(
        default_factory=list, description="actions (a command, or send: + verify:); {ch} repeats them per channel")
    driver_class: str | None = Field(None, alias="class", description="registered Python class name")
    path: str | None = Field(None, exclude=True)

    @field_validator("safe_state", mode="before")
    @classmethod
    def _actions(cls, v: Any) -> Any:
        items = [v] if isinstance(v, str | dict) else v
        return [{"send": [x]} if isinstance(x, str) else x for x in items] if isinstance(items, list) else items

    @field_validator("errors", mode="before")
    @classmethod
    def _one_source(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v

    @model_validator(mode="after")
    def _roles_served(self) -> Profile:
        for role in self.roles:
            need = REQUIREMENTS.get(role, {})
            missing = [p for p in need.get("properties", ()) if p not in self.properties]
            missing += [f"action {a}" for a in need.get("actions", ()) if a not in self.actions]
            if missing and not self.driver_class:
                raise ValueError(f"role {role} needs {', '.join(missing)}")
        for action in self.safe_state:
            for name in action.verify:
                prop = self.properties.get(name)
                if prop is None or prop.get is None:
                    raise ValueError(f"safe_state verifies {name!r}, which is not a property with a `get`")
        return self

    def has(self, name: str) -> bool:
        return name in self.properties or name in self.actions

    def channel_id(self, channel: str | int | None, instrument: str | None = None) -> str:
        """The canonical id of a channel given as ``1``, ``"101"`` or ``"(@101)"``;
        :class:`~labctl.errors.InstrumentError` (naming ``instrument``, the fixture's role,
        else the profile) for one the instrument does not have."""
        from labctl.errors import InstrumentError

        ch = self.channels
        instrument = instrument or self.name
        if channel is None:
            if ch.default is not None:
                return ch.default
            if len(ch.ids) == 1:
                return ch.ids[0]
            raise InstrumentError(f"a channel is needed (one of {', '.join(ch.ids) or 'the instrument channels'})",
                                  instrument=instrument)
        text = str(channel).strip()
        m = _CHANNEL_TEXT.match(text)
        if m:
            text = m.group(1).strip()
        if ch.ids:
            for cid in ch.ids:
                if text.upper() in (cid.upper(), ch.format.format(id=cid).upper()):
                    return cid
            raise InstrumentError(f"no channel {channel!r} (channels: {', '.join(ch.ids)})", instrument=instrument,
                                  hint="check the channel in the fixture's channels map")
        if not re.fullmatch(ch.accept, text):
            raise InstrumentError(f"bad channel {channel!r}", instrument=instrument,
                                  hint=f"channel ids match /{ch.accept}/")
        return text


_CHANNEL_TEXT = re.compile(r"^\(@(.+)\)$")


def _check_template(template: str | None) -> None:
    if template is None:
        return
    try:
        list(string.Formatter().parse(template))
    except ValueError as err:
        raise ValueError(f"bad template {template!r}: {err}") from None


def profile_dirs() -> list[Path]:
    from labctl.resources import data_dir

    return [data_dir("drivers")]


def profile_path(name: str, search: list[Path] | None = None) -> Path:
    p = Path(name)
    if p.suffix in (".yaml", ".yml") and p.exists():
        return p
    for folder in search or profile_dirs():
        candidate = folder / f"{name}.yaml"
        if candidate.exists():
            return candidate
    known = ", ".join(available_profiles(search)) or "none"
    raise ProfileError(
        f"no driver profile named {name!r}",
        hint=f"known profiles: {known}; a profile is drivers/<name>.yaml",
    )


def available_profiles(search: list[Path] | None = None) -> list[str]:
    names: set[str] = set()
    for folder in search or profile_dirs():
        if folder.is_dir():
            names.update(p.stem for p in folder.glob("*.yaml"))
    return sorted(names)


def parse_profile(data: Any, *, file: str | Path | None = None) -> Profile:
    """Validate already-loaded YAML data; errors are one line with the file and the field."""
    if not isinstance(data, dict):
        raise ProfileError("a driver profile must be a mapping at the top level", file=file)
    try:
        prof = Profile.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "profile"
        msg = first["msg"].removeprefix("Value error, ")
        more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
        raise ProfileError(f"{where}: {msg}{more}", file=file, hint="see docs/drivers.md for the profile format") from None
    if file is not None:
        prof.path = str(file)
    return prof


def _read_yaml(p: Path) -> Any:
    import yaml

    try:
        # libyaml's C loader where available (~10× faster than the pure-Python one, same data)
        data = yaml.load(p.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as err:
        raise ProfileError(f"cannot read driver profile: {err.strerror}", file=p) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise ProfileError(
            f"bad YAML: {getattr(err, 'problem', err)}",
            file=p,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    return data


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load_profile_file(path: str | Path, _seen: tuple[str, ...] = ()) -> Profile:
    """Load and validate one profile file; ``extends: other-profile`` merges over that one."""
    p = Path(path)
    data = _read_yaml(p)
    if isinstance(data, dict) and "extends" in data:
        base_name = str(data.pop("extends"))
        if base_name in _seen:
            raise ProfileError(f"extends loop through {base_name!r}", file=p)
        base_path = profile_path(base_name, [p.parent, *profile_dirs()])
        base = _read_yaml(base_path)
        if isinstance(base, dict) and "extends" in base:
            base = load_profile_file(base_path, (*_seen, p.stem)).model_dump(by_alias=True, exclude_none=True)
        data = _merge(base if isinstance(base, dict) else {}, data)
    prof = parse_profile(data, file=p)
    if prof.name != p.stem:
        raise ProfileError(f"name {prof.name!r} differs from the file name {p.stem!r}", file=p)
    return prof


@lru_cache(maxsize=64)
def _cached(path: str, mtime: float) -> Profile:
    return load_profile_file(path)


def load_profile(name: str, search: list[Path] | None = None) -> Profile:
    """The profile ``name`` (or a path to a .yaml file), validated; cached per file version."""
    p = profile_path(name, search)
    return _cached(str(p), p.stat().st_mtime)
