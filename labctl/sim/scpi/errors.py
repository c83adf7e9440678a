"""SCPI error codes, the 20-deep error queue and the Standard Event Status Register bits."""

from __future__ import annotations

from collections import deque

# SCPI-1999 / IEEE 488.2 standard messages.
MESSAGES: dict[int, str] = {
    0: "No error",
    -100: "Command error",
    -101: "Invalid character",
    -102: "Syntax error",
    -103: "Invalid separator",
    -104: "Data type error",
    -108: "Parameter not allowed",
    -109: "Missing parameter",
    -112: "Program mnemonic too long",
    -113: "Undefined header",
    -114: "Header suffix out of range",
    -120: "Numeric data error",
    -131: "Invalid suffix",
    -141: "Invalid character data",
    -151: "Invalid string data",
    -200: "Execution error",
    -221: "Settings conflict",
    -222: "Data out of range",
    -223: "Too much data",
    -224: "Illegal parameter value",
    -230: "Data corrupt or stale",
    -241: "Hardware missing",
    -350: "Queue overflow",
    -400: "Query error",
    -410: "Query INTERRUPTED",
    -420: "Query UNTERMINATED",
    -430: "Query DEADLOCKED",
    -500: "Power on",
}

# Standard Event Status Register bits.
ESR_OPC = 1
ESR_QYE = 4
ESR_DDE = 8
ESR_EXE = 16
ESR_CME = 32
ESR_URQ = 64
ESR_PON = 128

# Status Byte bits.
STB_EAV = 4  # error/event queue not empty
STB_MAV = 16
STB_ESB = 32
STB_MSS = 64

QUEUE_DEPTH = 20


class ScpiError(Exception):
    """Raised by a command handler; the instrument puts it in its error queue."""

    def __init__(self, code: int, detail: str | None = None) -> None:
        self.code = code
        self.detail = detail
        super().__init__(self.text)

    @property
    def text(self) -> str:
        base = MESSAGES.get(self.code, "Device-specific error")
        return f"{base}; {self.detail}" if self.detail else base


def esr_bit(code: int) -> int:
    """The ESR bit an error of ``code`` sets."""
    if -199 <= code <= -100:
        return ESR_CME
    if -299 <= code <= -200:
        return ESR_EXE
    if -499 <= code <= -400:
        return ESR_QYE
    if code == -500:
        return ESR_PON
    return ESR_DDE


class ErrorQueue:
    """First in, first out, :data:`QUEUE_DEPTH` entries; overflow replaces the newest."""

    def __init__(self, depth: int = QUEUE_DEPTH) -> None:
        self.depth = depth
        self._q: deque[tuple[int, str]] = deque()

    def push(self, code: int, text: str | None = None) -> None:
        text = text if text is not None else MESSAGES.get(code, "Device-specific error")
        if len(self._q) >= self.depth:
            self._q[-1] = (-350, MESSAGES[-350])
            return
        self._q.append((code, text))

    def pop(self) -> tuple[int, str]:
        return self._q.popleft() if self._q else (0, MESSAGES[0])

    def pop_formatted(self) -> str:
        code, text = self.pop()
        return format_error(code, text)

    def clear(self) -> None:
        self._q.clear()

    def __len__(self) -> int:
        return len(self._q)

    def entries(self) -> list[tuple[int, str]]:
        return list(self._q)


#: the longest error description SCPI allows (SCPI 1999, the SYSTem:ERRor? reply)
MESSAGE_MAX = 255


def format_error(code: int, text: str) -> str:
    """``-113,"Undefined header"``; the empty entry is ``+0,"No error"``.

    The message holds no double quote and no comma (a detail's are turned into ``'`` and
    ``|``): clients split the reply at its first comma, some at every comma (python-ivi's
    ``code, msg = reply.split(',')``), and a quote would end the string early."""
    num = f"+{code}" if code >= 0 else str(code)
    if '"' in text or "," in text:
        text = text.replace('"', "'").replace(", ", "|").replace(",", "|")
    if not (text.isascii() and text.isprintable()) or len(text) > MESSAGE_MAX:
        # what a client sent, quoted in a detail, is not echoed raw: printable ASCII, at most
        # the 255 characters SCPI allows an error description
        text = "".join(c if " " <= c <= "~" else "?" for c in text[:MESSAGE_MAX])
    return f'{num},"{text}"'
