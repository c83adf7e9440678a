"""VISA transport: pyvisa with the pure-Python pyvisa-py backend by default.

``backend`` selects another VISA library ("@py" default, "@ivi" or a path for NI-VISA /
Keysight IO Libraries, "file.yaml@sim" for pyvisa-sim). Works for TCPIP INSTR and SOCKET,
USB, GPIB and ASRL resources alike.
"""

from __future__ import annotations

import os
import select
import socket
import threading
from typing import Any

from labctl.instruments.transports.base import Transport
from labctl.instruments.visa_import import import_pyvisa

_RMS: dict[str, Any] = {}
_RM_LOCK = threading.Lock()


def resource_manager(backend: str = "@py") -> Any:
    """One shared pyvisa ResourceManager per backend.

    pyvisa hands out one ResourceManager per library, so any other code in the process (a
    user script, a third-party driver) may close it under us: a closed one is replaced.
    """
    pyvisa = import_pyvisa()

    with _RM_LOCK:
        rm = _RMS.get(backend)
        if rm is None or getattr(rm, "_session", None) is None:
            rm = _RMS[backend] = pyvisa.ResourceManager(backend)
        return rm


_SERIAL_OPTIONS = ("baud_rate", "data_bits", "stop_bits", "parity", "flow_control")
_PEEK = int(socket.MSG_PEEK | socket.MSG_DONTWAIT)  # a plain int: no enum arithmetic per query


class VisaTransport(Transport):
    kind = "visa"

    def __init__(self, resource: str, *, backend: str = "@py", **kw: Any) -> None:
        super().__init__(resource, **kw)
        self.backend = backend
        self._inst: Any = None

    def _open(self) -> None:
        pyvisa = import_pyvisa()  # without numpy: labctl.instruments.visa_import

        ms = max(1, int(self.timeout * 1000))
        try:
            inst = resource_manager(self.backend).open_resource(self.resource, open_timeout=ms)
        except pyvisa.errors.VisaIOError as err:
            raise _translate(err) from None
        except ValueError as err:  # malformed resource string
            raise ConnectionError(f"bad resource string: {err}") from None
        except Exception as err:  # noqa: BLE001 - pyvisa-py's own (a host name that does not resolve, a port past 65535)
            raise ConnectionError(str(err) or type(err).__name__) from None
        inst.timeout = ms
        inst.read_termination = self.read_termination
        inst.write_termination = self.write_termination
        if self.resource.upper().startswith("ASRL"):
            for key in _SERIAL_OPTIONS:
                if key in self.options:
                    setattr(inst, key, self.options[key])
        self._inst = inst
        if self._socket() is not None:
            self._check_connected()

    def _close(self) -> None:
        inst, self._inst = self._inst, None
        if inst is not None:
            inst.close()

    def _write(self, command: str) -> None:
        try:
            self._inst.write(command, encoding="utf-8")  # (ASCII as it is; a plan's "µ" as UTF-8)
        except Exception as err:
            if not _visa_io_error(err):
                raise
            raise _translate(err) from None

    def _read(self) -> str:
        """One reply line as text: UTF-8 (ASCII is a part of it); a byte that is not is kept
        as its escape (``\\xff``), so a garbled reply is reported with what came, never raised."""
        try:
            text = self._inst.read_raw().decode("utf-8", "backslashreplace")
        except Exception as err:
            if not _visa_io_error(err):
                raise
            exc = _translate(err)
            if isinstance(exc, TimeoutError) and self._peer_closed():
                raise ConnectionError("the instrument closed the connection") from None
            raise exc from None
        term = self.read_termination
        if term and text.endswith(term):
            text = text[:-len(term)]
        return text.rstrip("\r\n")

    def _flush_input(self) -> None:
        sock = self._socket()
        if sock is None:
            return
        # pyvisa-py keeps bytes after a terminator in a pending buffer; drop it too.
        session = self._session()
        if session is not None and hasattr(session, "_pending_buffer"):
            session._pending_buffer.clear()
        sock.setblocking(False)
        try:
            while sock.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        finally:
            sock.setblocking(True)

    def _peek_target(self) -> tuple[Any, Any, socket.socket | None]:
        """(resource, pyvisa-py session, socket) of the open resource, looked up once per open."""
        known = self.__dict__.get("_peek_of")
        if known is None or known[0] is not self._inst:
            session = self._session()
            known = self._peek_of = (self._inst, session, self._socket())
        return known

    @property
    def _can_peek(self) -> bool:  # type: ignore[override]
        """A socket resource of pyvisa-py (other backends and VXI-11 resources cannot tell)."""
        return self._peek_target()[2] is not None

    def _pending(self) -> bool:
        """Reply bytes already here (an extra line after an answer): pyvisa-py's buffer, then
        the socket. ``poll`` first: the usual answer, nothing, costs no exception (a peeking
        ``recv`` on an empty socket raises ``BlockingIOError``); when the socket is readable,
        the peek tells data from the connection's end."""
        sock = self._readable_socket()
        if sock is None:
            return False
        if sock is True:
            return True
        try:
            return bool(sock.recv(1, _PEEK))
        except (BlockingIOError, InterruptedError):
            return False

    def _reply_waiting(self) -> bool:
        """The watch's look: pyvisa-py's buffer, then ``poll`` on the socket, which (unlike a
        peeking ``recv``) does not lock the socket against the reply arriving meanwhile."""
        return self._readable_socket() is not None

    def _readable_socket(self) -> socket.socket | bool | None:
        """True when pyvisa-py's buffer holds reply bytes, else the socket when ``poll`` finds
        it readable (data, or the connection's end), else None."""
        _inst, session, sock = self._peek_target()
        if session is not None and getattr(session, "_pending_buffer", None):
            return True
        if sock is None:
            return None
        poller = self.__dict__.get("_poller")
        if poller is None or poller[0] is not sock:
            poll = select.poll()
            poll.register(sock, select.POLLIN)
            poller = self._poller = (sock, poll.poll)
        return sock if poller[1](0) else None

    # pyvisa-py internals, used only when present (other backends simply skip these checks).
    def _session(self) -> Any:
        inst = self._inst
        if inst is None:
            return None
        known = self.__dict__.get("_session_of")
        if known is not None and known[0] is inst:  # looked up once per open resource
            return known[1]
        sessions = getattr(inst.visalib, "sessions", None)
        session = sessions.get(inst.session) if isinstance(sessions, dict) else None
        if session is not None:
            self._session_of = (inst, session)
        return session

    def _socket(self) -> socket.socket | None:
        session = self._session()
        sock = getattr(session, "interface", None)
        return sock if isinstance(sock, socket.socket) else None

    def _check_connected(self) -> None:
        sock = self._socket()
        if sock is None:
            return
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise ConnectionError(f"{os.strerror(error).lower()}: nothing listens at this address")
        try:
            sock.getpeername()
        except OSError:
            raise ConnectionError("connection refused: nothing listens at this address") from None

    def _peer_closed(self) -> bool:
        sock = self._socket()
        if sock is None:
            return False
        try:
            return sock.recv(1, _PEEK) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True


def _visa_io_error(err: BaseException) -> bool:
    """``err`` is pyvisa's VisaIOError (pyvisa is imported by then: the resource is open)."""
    import pyvisa

    return isinstance(err, pyvisa.errors.VisaIOError)


def _translate(err: Any) -> Exception:
    """A pyvisa VisaIOError as the builtin TimeoutError or ConnectionError."""
    from pyvisa import constants

    code = getattr(err, "error_code", None)
    if code == constants.StatusCode.error_timeout:
        return TimeoutError(str(err))
    return ConnectionError(str(err))
