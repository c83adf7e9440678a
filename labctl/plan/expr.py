"""The plan's small, safe expression language (no ``eval``).

Used inside ``${…}`` in values (``nominal: ${vin * 0.95}``, ``"lane ${lane}"``) and for
``when:`` conditions (``ambient >= 25 degC and not quick``)::

    expr    := or
    or      := and ("or" and)*
    and     := not ("and" not)*
    not     := "not" not | compare
    compare := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
    sum     := product (("+" | "-") product)*
    product := unary (("*" | "/") unary)*
    unary   := ("-" | "+") unary | atom
    atom    := NUMBER [UNIT] | NAME | STRING | "true" | "false" | "(" expr ")"

A unit follows its number without operators in between (``25 mV``, ``1.5 degC/min``).
A temperature added to or subtracted from a temperature on the degC scale is a difference:
``${die_max - 10 degC}`` is 95 degC when die_max is 105 degC.
Names are parameters and corner axes. Quantities carry units through the arithmetic (pint),
so ``${vin * 5 %}`` is a voltage and ``${vin + 2 A}`` is an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from labctl.errors import ExpressionError, UnitError
from labctl.plan.bounds import MAX_DIGITS, MAX_EXPR_DEPTH, MAX_EXPR_TOKENS
from labctl.plan.temperatures import mixed_scales
from labctl.units import DIMENSIONS, Quantity, check_range, display_symbol, parse_quantity

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)
    (?:[ ]?(?P<unit>(?:%|[A-Za-z°µμΩ][A-Za-z0-9_°µμΩ]*(?:/[A-Za-z°µμΩ][A-Za-z0-9_°µμΩ]*)*)))?
  | (?P<op>==|!=|<=|>=|[-+*/()<>])
  | (?P<str>"[^"]*"|'[^']*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
    """,
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "true", "false"}
_WORDS_HINT = ("an expression holds numbers with units, names, + - * /, == != < <= > >=, and or not, "
               "parentheses and quoted text")
_JOIN_HINT = "join values with an operator (vin * 2); a unit follows its number (25 mV)"
_CLOSE_HINT = "close it with '}': ${vin * 0.95}"
_ZERO_HINT = "the divisor is zero here: check the values it is computed from"


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    offset: int
    unit: str | None = None


@dataclass(frozen=True)
class Node:
    """An expression tree node: ``op`` is num, name, str, bool, neg, not, and, or, + … >=."""

    op: str
    args: tuple[Any, ...]
    offset: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m:
            raise ExpressionError(f"unexpected character {text[i]!r} in expression", column=i, hint=_WORDS_HINT)
        kind = m.lastgroup
        if kind != "ws" and len(tokens) >= MAX_EXPR_TOKENS:
            raise ExpressionError(
                f"expression too long: more than {MAX_EXPR_TOKENS} numbers, names and operators",
                column=i, hint="split it: compute parts in parameters and combine them")
        if m.group("num") is not None:
            digits = sum(c.isdigit() for c in m.group("num"))
            if digits > MAX_DIGITS:
                raise ExpressionError(f"number too long: {digits:,} digits, more than the limit of {MAX_DIGITS}",
                                      column=i, hint="use an exponent, e.g. 1.5e9")
            unit = m.group("unit")
            if unit and unit.lower() in _KEYWORDS:  # "3 and x": not a unit
                tokens.append(Token("num", m.group("num"), i))
                i = m.start("unit")
                continue
            tokens.append(Token("num", m.group("num"), i, unit))
        elif kind == "op":
            tokens.append(Token("op", m.group("op"), i))
        elif kind == "str":
            tokens.append(Token("str", m.group("str")[1:-1], i))
        elif kind == "name":
            word = m.group("name")
            tokens.append(Token("kw" if word.lower() in _KEYWORDS else "name", word, i))
        i = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    def deeper(self, tok: Token) -> None:
        """Enter one level of parentheses, ``not`` or sign (bounded: no RecursionError)."""
        self.depth += 1
        if self.depth > MAX_EXPR_DEPTH:
            raise self.fail(f"expression nested too deeply: more than {MAX_EXPR_DEPTH} levels of "
                            "parentheses, not and signs", tok, "compute parts in parameters and combine them")

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def accept(self, kind: str, *texts: str) -> Token | None:
        tok = self.peek()
        if tok and tok.kind == kind and (not texts or tok.text.lower() in texts):
            return self.take()
        return None

    def fail(self, message: str, tok: Token | None = None, hint: str | None = None) -> ExpressionError:
        offset = tok.offset if tok else len(self.text)
        return ExpressionError(message, column=offset, hint=hint)

    def parse(self) -> Node:
        if not self.tokens:
            raise self.fail("empty expression", hint="write an expression, e.g. ${vin * 0.95}")
        node = self.or_()
        tok = self.peek()
        if tok is not None:
            raise self.fail(f"unexpected {tok.text!r} in expression", tok, _JOIN_HINT)
        return node

    def or_(self) -> Node:
        node = self.and_()
        while (tok := self.accept("kw", "or")) is not None:
            node = Node("or", (node, self.and_()), tok.offset)
        return node

    def and_(self) -> Node:
        node = self.not_()
        while (tok := self.accept("kw", "and")) is not None:
            node = Node("and", (node, self.not_()), tok.offset)
        return node

    def not_(self) -> Node:
        tok = self.accept("kw", "not")
        if tok is not None:
            self.deeper(tok)
            node = Node("not", (self.not_(),), tok.offset)
            self.depth -= 1
            return node
        return self.compare()

    def compare(self) -> Node:
        node = self.sum_()
        tok = self.peek()
        if tok and tok.kind == "op" and tok.text in ("==", "!=", "<", "<=", ">", ">="):
            self.take()
            node = Node(tok.text, (node, self.sum_()), tok.offset)
        return node

    def sum_(self) -> Node:
        node = self.product()
        while (tok := self.accept("op", "+", "-")) is not None:
            node = Node(tok.text, (node, self.product()), tok.offset)
        return node

    def product(self) -> Node:
        node = self.unary()
        while (tok := self.accept("op", "*", "/")) is not None:
            node = Node(tok.text, (node, self.unary()), tok.offset)
        return node

    def unary(self) -> Node:
        tok = self.accept("op", "-", "+")
        if tok is not None:
            self.deeper(tok)
            inner = self.unary()
            self.depth -= 1
            return Node("neg", (inner,), tok.offset) if tok.text == "-" else inner
        return self.atom()

    def atom(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise self.fail("expression ends too early", hint="complete it after the last operator")
        self.take()
        if tok.kind == "num":
            return Node("num", (tok.text, tok.unit), tok.offset)
        if tok.kind == "name":
            return Node("name", (tok.text,), tok.offset)
        if tok.kind == "str":
            return Node("str", (tok.text,), tok.offset)
        if tok.kind == "kw" and tok.text.lower() in ("true", "false"):
            return Node("bool", (tok.text.lower() == "true",), tok.offset)
        if tok.kind == "op" and tok.text == "(":
            self.deeper(tok)
            node = self.or_()
            if self.accept("op", ")") is None:
                raise self.fail("missing ')'", self.peek(), "close every '(' with a ')'")
            self.depth -= 1
            return node
        raise self.fail(f"unexpected {tok.text!r} in expression", tok, _WORDS_HINT)


def parse(text: str, offset: int = 0) -> Node:
    """Parse an expression; :class:`ExpressionError` has ``column`` = offset in ``text``
    (plus ``offset``: where ``text`` starts in the string it comes from)."""
    try:
        return _Parser(text).parse()
    except ExpressionError as err:
        if offset:
            err.column = (err.column or 0) + offset
        raise


def names(node: Node) -> list[tuple[str, int]]:
    """Every name the expression uses, with its offset."""
    if node.op == "name":
        return [(node.args[0], node.offset)]
    out: list[tuple[str, int]] = []
    for a in node.args:
        if isinstance(a, Node):
            out.extend(names(a))
    return out


# ------------------------------------------------------------------------------------------
# evaluation


def _to_pint(v: Any) -> Any:
    if isinstance(v, Quantity):
        return v.to("") if v.is_ratio else v.pint()  # 5 % takes part as 0.05
    return v


def from_pint(value: Any) -> Any:
    """A pint result back to a :class:`Quantity` (plain numbers stay numbers)."""
    if not hasattr(value, "units"):
        return value
    if value.dimensionless:
        return float(value.to("dimensionless").magnitude)
    unit = _unit_text(value.units)
    delta = unit in ("delta_degC", "delta_degF")  # 10 delta_degC + 5 delta_degC: a difference
    q = Quantity(float(value.magnitude), unit.removeprefix("delta_") if delta else unit, delta)
    check_range(q)
    return q


def _unit_text(units: Any) -> str:
    from labctl.units import registry

    short = format(units, "~").replace(" ", "")
    short = short.replace("Δ°C", "delta_degC").replace("°C", "degC").replace("Δ°F", "delta_degF")
    short = short.replace("°F", "degF").replace("µ", "u").replace("Ω", "ohm").replace("**", "^")
    try:
        if registry().Unit(short) == units:
            return short
    except Exception:
        pass
    return str(units)


def evaluate(node: Node, env: dict[str, Any]) -> Any:
    """Evaluate with ``env`` (name -> number, Quantity, str, bool); errors carry ``column``."""
    op = node.op
    if op == "num":
        text, unit = node.args
        if unit:
            try:
                return parse_quantity(f"{text} {unit}")
            except UnitError as err:
                raise ExpressionError(err.message, column=node.offset, hint=err.hint) from None
        return _finite(float(text) if any(c in text for c in ".eE") else int(text), node.offset, text)
    if op == "name":
        name = node.args[0]
        if name not in env:
            raise ExpressionError(f"undefined parameter {name!r}", column=node.offset)
        return env[name]
    if op in ("str", "bool"):
        return node.args[0]
    if op == "not":
        return not _condition(node.args[0], env, op)
    if op in ("and", "or"):  # both sides, always: a mistake on either side is found at validation
        left, right = _condition(node.args[0], env, op), _condition(node.args[1], env, op)
        return (left and right) if op == "and" else (left or right)
    if op == "neg":
        v = evaluate(node.args[0], env)
        if isinstance(v, Quantity):
            return Quantity(-v.magnitude, v.unit, v.delta)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return -v
        raise ExpressionError(f"cannot negate {show_value(v)}: it is {kind_of(v)}", column=node.offset,
                              hint="only numbers and quantities take a sign")
    if op in ("==", "!="):
        for side in node.args:
            if side.op == "name" and side.args[0] not in env:
                word = side.args[0]
                raise ExpressionError(
                    f"undefined parameter {word!r}", column=side.offset,
                    hint=f"to compare with the text {word}, quote it: '{word}' "
                    "(a bare word is a parameter or a corner axis)")
    left = evaluate(node.args[0], env)
    right = evaluate(node.args[1], env)
    _same_kind(op, left, right, node)
    return _binary(op, left, right, node.offset)


def _finite(value: Any, offset: int, what: str) -> Any:
    """``value`` unless it is infinite or NaN (``1e308 V * 1e308`` is no voltage)."""
    magnitude = value.magnitude if isinstance(value, Quantity) else value
    if isinstance(magnitude, int) and not isinstance(magnitude, bool) and magnitude.bit_length() > 340:
        magnitude = math.inf  # beyond any double (about 1e102): as good as infinite here
    if isinstance(magnitude, float) and not math.isfinite(magnitude):
        what = what if len(what) <= 60 else what[:59] + "…"
        raise ExpressionError(f"{what} is not a finite number", column=offset,
                              hint="the value overflows; check the numbers and units")
    return value


def _condition(node: Node, env: dict[str, Any], op: str) -> bool:
    """An operand of ``and``, ``or``, ``not``: true or false, never a number or text read by
    its truthiness (``not lane_count``)."""
    value = evaluate(node, env)
    if not isinstance(value, bool):
        raise NotACondition(f"{op!r} takes true or false, but {show_value(value)} is {kind_of(value)}",
                            column=node.offset, hint=CONDITION_HINT)
    return value


class NotACondition(ExpressionError):
    """A number or text where ``and``, ``or``, ``not`` (or ``when:``) want true or false."""


#: what to write where a condition is wanted
CONDITION_HINT = "write a condition: a comparison (lane_count > 2, mode == 'full') or true/false"


def _has_unit(v: Any) -> bool:
    return isinstance(v, Quantity) and bool(v.unit) and not v.is_ratio


def _bare_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) or isinstance(v, Quantity) and not _has_unit(v)


def _same_kind(op: str, left: Any, right: Any, node: Node) -> None:
    """``+ -`` and comparisons take two values of one kind. A bare number against a
    temperature (``ambient >= 25``) is refused in our words, not pint's ("Cannot compare
    PlainQuantity and <class 'int'>"), ``vin == 5 A`` is refused, not silently false, and a
    condition is no number (``true + 1``)."""
    verb = "compute" if op in ("+", "-", "*", "/") else "compare"
    what = f"cannot {verb} {show_value(left)} {op} {show_value(right)}"
    for i, (v, other) in enumerate(((left, right), (right, left))):
        side = node.args[i]
        column = side.offset if side.op in ("num", "bool", "neg") else node.offset
        if isinstance(v, bool) and not isinstance(other, bool | str):
            raise ExpressionError(f"{what}: {show_value(v)} is a condition and {show_value(other)} is {kind_of(other)}",
                                  column=column, hint="a condition is used on its own (when: quick) or with "
                                  "and, or, not; compare quantities with quantities (vin > 4.5 V)")
        if op not in ("*", "/") and _has_unit(other) and _bare_number(v):
            if isinstance(v, Quantity):
                raise ExpressionError(f"{what}: {show_value(v)} is a ratio and {show_value(other)} is {kind_of(other)}",
                                      column=column, hint=f"{verb} values of the same kind of unit")
            raise ExpressionError(f"{what}: {show_value(v)} is a bare number and {show_value(other)} is {kind_of(other)}",
                                  column=column, hint=f"give the number a unit, e.g. {v:g} {display_symbol(other.unit)}")
    if verb == "compare" and _has_unit(left) and _has_unit(right) \
            and left.pint().dimensionality != right.pint().dimensionality:
        raise ExpressionError(f"{what}: {show_value(left)} is {kind_of(left)} and {show_value(right)} is {kind_of(right)}",
                              column=node.offset, hint="both sides of a comparison need the same kind of unit")
    if op in ("==", "!=") and isinstance(left, str) != isinstance(right, str):
        _text_against_value(op, left, right, node)
    mixed = mixed_scales(left, right, op) if verb == "compare" else None
    if mixed is not None:  # 10 K > 5 degC: false as temperatures, true as differences
        raise ExpressionError(f"{what}: {mixed[0]}", column=node.offset, hint=mixed[1])


def _text_against_value(op: str, left: Any, right: Any, node: Node) -> None:
    """``lanes == '4'``: quoted text never equals a number, a quantity or true/false (it was
    compared as text, silently false for 4.0, 4 V or true); say which quotes to remove or add."""
    i = 0 if isinstance(left, str) else 1
    text, value, text_side, value_side = (left, right, *node.args) if i == 0 else (right, left, *node.args[::-1])
    what = f"cannot compare {show_value(left)} {op} {show_value(right)}: {show_value(text)} is text and " \
           f"{show_value(value)} is {kind_of(value)}"
    if text_side.op == "str":  # a quoted literal: the quotes are the mistake
        unquoted = text.strip()
        hint = (f"remove the quotes to compare {_plural(value)}: {_written(value_side, '…')} {op} {unquoted}"
                if _parses_as(unquoted, value) else f"{_written(value_side)} is {kind_of(value)}: compare it "
                f"with {kind_of(value)}, e.g. {_written(value_side)} {op} {show_value(value)}")
        raise ExpressionError(what, column=text_side.offset, hint=hint)
    hint = (f"{_written(text_side)} is text: compare it with quoted text, e.g. "
            f"{_written(text_side)} {op} '{show_value(value)}'")
    if value_side.op == "name":
        hint = (f"{_written(text_side)} is text and {_written(value_side)} is {kind_of(value)}: "
                "they are never equal; compare each with a value of its own kind")
    raise ExpressionError(what, column=value_side.offset if value_side.op in ("num", "bool", "neg") else node.offset,
                          hint=hint)


def _written(side: Node, other: str = "the value") -> str:
    """A side of a comparison as the plan wrote it, when it is a name (else ``other``)."""
    return side.args[0] if side.op == "name" else other


def _plural(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false values"
    return "numbers" if kind_of(value) == "a number" else "quantities"


def _parses_as(text: str, value: Any) -> bool:
    """Whether the quoted text, unquoted, is a value of the same kind as ``value``."""
    if isinstance(value, bool):
        return text in ("true", "false")
    try:
        other = evaluate_text(text, {})
    except ExpressionError:
        return False
    if isinstance(other, bool) or isinstance(other, str):
        return False
    if isinstance(value, Quantity) and _has_unit(value):
        return isinstance(other, Quantity) and other.pint().dimensionality == value.pint().dimensionality
    return _bare_number(other)


def kind_of(value: Any) -> str:
    """What a value is, for messages: ``a number``, ``text``, ``a voltage``, ``true/false`` …"""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float) or isinstance(value, Quantity) and not _has_unit(value):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, Quantity):
        dim = value.dimension
        if dim not in DIMENSIONS:
            return "a quantity"
        name = dim.replace("_", " ") + (" difference" if value.delta and dim == "temperature" else "")
        return ("an " if name[0] in "aeiou" else "a ") + name
    return type(value).__name__


def _binary(op: str, left: Any, right: Any, offset: int) -> Any:
    import operator

    ops = {
        "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
        "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge,
    }
    if isinstance(left, str) or isinstance(right, str):
        if op in ("==", "!="):
            return ops[op](str(left), str(right))
        if op == "+" and isinstance(left, str) and isinstance(right, str):
            return left + right
        raise ExpressionError(f"cannot apply {op!r} to text {left!r} and {show_value(right)}", column=offset,
                              hint="text is compared with == or != only, and joined with +")
    if op in ("+", "-"):
        left, right = _temperature_offsets(op, left, right)
    elif op in _COMPARISONS and (_is_difference(left) or _is_difference(right)):
        left, right = _as_difference(left), _as_difference(right)  # 10 delta_degC > 5 degC
    if isinstance(left, Quantity) or isinstance(right, Quantity):
        try:
            result = ops[op](_to_pint(left), _to_pint(right))
        except ZeroDivisionError:
            raise ExpressionError("division by zero", column=offset, hint=_ZERO_HINT) from None
        except Exception as err:
            raise ExpressionError(
                f"cannot compute {show_value(left)} {op} {show_value(right)}: {_pint_reason(err, left, right)}",
                column=offset,
                hint="both sides of + - and comparisons need the same dimension; "
                "write temperature differences as e.g. 5 delta_degC",
            ) from None
        if op in _COMPARISONS:
            return bool(result)
        try:
            value = from_pint(result)
        except UnitError as err:
            raise ExpressionError(err.message, column=offset, hint=err.hint) from None
        return _finite(value, offset, f"{show_value(left)} {op} {show_value(right)}")
    try:
        return _finite(ops[op](left, right), offset, f"{show_value(left)} {op} {show_value(right)}")
    except ZeroDivisionError:
        raise ExpressionError("division by zero", column=offset, hint=_ZERO_HINT) from None
    except OverflowError:
        return _finite(math.inf, offset, f"{show_value(left)} {op} {show_value(right)}")
    except TypeError:
        raise ExpressionError(f"cannot compute {show_value(left)} {op} {show_value(right)}", column=offset,
                              hint="arithmetic takes numbers and quantities") from None


_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def _is_difference(v: Any) -> bool:
    return isinstance(v, Quantity) and v.delta and v.dimension == "temperature"


def _is_scale_temperature(v: Any) -> bool:
    return isinstance(v, Quantity) and not v.delta and v.unit in ("degC", "degF")


def _as_difference(v: Any) -> Any:
    if isinstance(v, Quantity) and v.dimension == "temperature":
        if v.unit in ("K", "kelvin"):
            return Quantity(v.magnitude, "degC", delta=True)
        return Quantity(v.magnitude, v.unit, delta=True)
    return v


def _temperature_offsets(op: str, left: Any, right: Any) -> tuple[Any, Any]:
    """``105 degC - 10 degC`` is 95 degC: a temperature added to or taken from a temperature
    on the degC scale is read as a difference (write it as you would say it)."""
    if _is_scale_temperature(left):
        return left, _as_difference(right)
    if op == "+" and _is_scale_temperature(right):
        return _as_difference(left), right
    return left, right


def show_value(v: Any) -> str:
    """A value as a plan writes it: ``5 V``, ``'fast'``, ``true``."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v) if isinstance(v, Quantity) else repr(v)


def _pint_reason(err: Exception, left: Any, right: Any) -> str:
    """Why pint refused, in our words (its own name classes and Python types)."""
    name = type(err).__name__
    if name == "DimensionalityError":
        return "the units do not match"
    if name == "OffsetUnitCalculusError":
        return "a temperature on the degC scale cannot be added or multiplied as it is"
    return f"{kind_of(left)} and {kind_of(right)} do not combine"


def evaluate_text(text: str, env: dict[str, Any]) -> Any:
    """Parse and evaluate in one go."""
    return evaluate(parse(text), env)


# ------------------------------------------------------------------------------------------
# ${…} templates in YAML strings

_TEMPLATE = re.compile(r"\$\{(?P<body>[^}]*)\}")


@dataclass(frozen=True)
class Template:
    """A YAML string holding ``${…}``: either one whole expression (keeps its type) or text
    with interpolations (becomes text)."""

    text: str

    @staticmethod
    def find(value: Any) -> Template | None:
        if isinstance(value, str) and "${" in value:
            return Template(value)
        return None

    def parts(self) -> list[tuple[str, int]]:
        """``(expression, offset of its first character in the string)`` for each ``${…}``."""
        out = []
        for m in _TEMPLATE.finditer(self.text):
            out.append((m.group("body"), m.start("body")))
        if "${" in self.text and not out:
            raise ExpressionError("unclosed '${': expected '}'", column=self.text.index("${"), hint=_CLOSE_HINT)
        rest = _TEMPLATE.sub("", self.text)
        if "${" in rest:
            raise ExpressionError("unclosed '${': expected '}'", column=self.text.rindex("${"), hint=_CLOSE_HINT)
        return out

    @property
    def whole(self) -> bool:
        m = _TEMPLATE.fullmatch(self.text.strip())
        return m is not None

    def render(self, env: dict[str, Any]) -> Any:
        """The value: an expression's own type when the string is just ``${…}``."""
        parts = self.parts()
        if self.whole:
            body, offset = parts[0]
            return _eval_at(body, offset, env)

        def sub(m: re.Match[str]) -> str:
            v = _eval_at(m.group("body"), m.start("body"), env)
            return str(v) if not isinstance(v, float) else f"{v:g}"

        return _TEMPLATE.sub(sub, self.text)


def _eval_at(body: str, offset: int, env: dict[str, Any]) -> Any:
    try:
        return evaluate_text(body, env)
    except ExpressionError as err:
        raise type(err)(
            err.message, column=offset + (err.column or 0), hint=err.hint
        ) from None
