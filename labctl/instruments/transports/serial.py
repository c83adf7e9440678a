"""Serial transport over pyserial (device paths such as /dev/ttyUSB0, COM3, or a pty).

Every I/O failure of the port (pyserial's ``SerialException``, ``OSError`` and the
``termios.error`` a vanished tty raises on flush) is a dropped link: the base class then
reconnects. A USB-serial adapter or pty that drops comes back under the same path after a
moment, so reconnect attempts go on for up to the instrument's timeout.
"""

from __future__ import annotations

import errno
import os
import select
import time
from typing import Any

from labctl.instruments.transports.base import Transport

try:
    from termios import error as _TtyError
except ImportError:  # Windows: no termios
    _TtyError = OSError


class SerialTransport(Transport):
    kind = "serial"
    disconnect_hint = ("check the serial cable/USB adapter and that the device path exists (or that the simulated "
                       "lab runs); after a reconnect no command is replayed and no output is re-enabled")

    def __init__(self, resource: str, **kw: Any) -> None:
        super().__init__(resource, **kw)
        self._port: Any = None
        self._rx = bytearray()  # bytes read past the last line returned

    def _open(self) -> None:
        import serial

        opts = self.options
        self._rx.clear()
        try:
            self._port = serial.serial_for_url(
                self.resource,
                baudrate=int(opts.get("baud_rate", 9600)),
                bytesize=int(opts.get("data_bits", 8)),
                parity=str(opts.get("parity", "N"))[:1].upper(),
                stopbits=float(opts.get("stop_bits", 1)),
                timeout=min(self.timeout, 0.1),
                write_timeout=self.timeout,
                exclusive=bool(opts.get("exclusive", False)) or None,
            )
        except (serial.SerialException, ValueError, OSError, _TtyError) as err:
            if getattr(err, "errno", None) == errno.ENOENT:
                raise ConnectionError("no such serial device (is the cable plugged in / the simulated lab running?)") from None
            raise ConnectionError(str(err)) from None
        try:
            self._port.reset_input_buffer()
        except (serial.SerialException, OSError, _TtyError) as err:
            raise ConnectionError(_reason(err)) from None

    def _reconnect_window(self) -> float:
        return self.timeout

    def _close(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            port.close()

    def _write(self, command: str) -> None:
        import serial

        data = (command + self.write_termination).encode()
        port = self._port
        fd = getattr(port, "fd", None)
        try:  # no flush (tcdrain): a query waits for its answer anyway, and closing a tty drains it
            if isinstance(fd, int):  # a local tty: one write (pyserial's adds a select and a timer per call)
                try:
                    n = os.write(fd, data)
                except BlockingIOError:
                    n = 0
                data = data[n:]
            if data:  # the rest (a full output buffer), with pyserial's write timeout
                port.write(data)
        except serial.SerialTimeoutException as err:
            raise TimeoutError(str(err)) from None
        except (serial.SerialException, OSError, _TtyError) as err:
            raise ConnectionError(_reason(err)) from None

    def _read(self) -> str:
        term = self.read_termination.encode() or b"\n"
        buf = self._rx
        deadline = 0.0  # set when the first wait starts (a line already received needs no clock)
        fd = getattr(self._port, "fd", None)  # a local tty (pyserial's posix port): read it directly
        try:
            while True:
                end = buf.find(term)
                if end >= 0:
                    line = bytes(buf[:end])
                    del buf[: end + len(term)]
                    return line.decode(errors="replace").rstrip("\r")
                if not deadline:
                    deadline = time.monotonic() + self.timeout
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                if isinstance(fd, int):  # whatever has arrived, in one read (pyserial's read(n) waits for n)
                    if select.select([fd], [], [], min(remaining, 0.1))[0]:
                        chunk = os.read(fd, 4096)
                        if not chunk:  # readable, yet nothing: the device is gone (as pyserial says)
                            raise ConnectionError("the serial device went away (readable but no data)")
                        buf += chunk
                else:  # what is waiting, at once (pyserial's read_until asks for one byte at a time)
                    buf += self._port.read(max(1, self._port.in_waiting))
        except _port_errors() as err:
            raise ConnectionError(_reason(err)) from None
        partial = bytes(buf)
        buf.clear()
        raise TimeoutError(f"no complete line (got {partial!r})")

    def _read_lines(self, limit: int) -> list[str]:
        """The next line (waited for), then every complete line already received, up to
        ``limit`` in all: a console's table of readings arrives in one read, and is split once."""
        lines = [self._read()]
        buf = self._rx
        term = self.read_termination.encode() or b"\n"
        end = buf.rfind(term)
        if limit <= 1 or end < 0:
            return lines
        raw = bytes(buf[:end]).split(term)
        if len(raw) < limit:
            del buf[: end + len(term)]
        else:  # more complete lines than wanted: the rest stay buffered
            raw = raw[: limit - 1]
            del buf[: sum(map(len, raw)) + len(term) * len(raw)]
        lines += [r.decode(errors="replace").rstrip("\r") for r in raw]
        return lines

    def _unread(self, lines: list[str]) -> None:
        if lines:  # lines after the one wanted go back in front of what is still buffered
            term = self.read_termination or "\n"
            self._rx[:0] = "".join(line + term for line in lines).encode()

    _can_peek = True

    def _pending(self) -> bool:
        import serial

        try:
            return bool(self._rx) or self._port is not None and self._port.in_waiting > 0
        except (serial.SerialException, _TtyError) as err:
            raise ConnectionError(_reason(err)) from None

    def _flush_input(self) -> None:
        import serial

        self._rx.clear()
        if self._port is not None:
            try:
                self._port.reset_input_buffer()
            except (serial.SerialException, OSError, _TtyError) as err:
                raise ConnectionError(_reason(err)) from None


def _port_errors() -> tuple[type[BaseException], ...]:
    """What a failing port raises (pyserial is imported by then: the port was opened with it;
    a function's own ``import serial`` costs more than reading a buffered line)."""
    import serial

    return serial.SerialException, OSError, _TtyError


def _reason(err: BaseException) -> str:
    """``(5, 'Input/output error')`` as ``input/output error (errno 5)``."""
    args = getattr(err, "args", ())
    if len(args) == 2 and isinstance(args[0], int):
        return f"{str(args[1]).lower()} (errno {args[0]}): the serial device went away"
    return str(err) or type(err).__name__
