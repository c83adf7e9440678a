"""A control socket beside a served simulated lab: inject faults, swap the DUT, read state.

The lab listens on a Unix socket (one JSON request per line, one JSON reply per line), so
that ``labctl sim inject``/``dut``/``state`` and tests can steer a lab served by another
process the way a technician would swap a board or pull a cable. It is not an instrument:
labctl's engine never uses it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
from pathlib import Path
from typing import Any

from labctl.errors import InstrumentDisconnected, LabctlError

log = logging.getLogger(__name__)
POLL = 0.1


def default_control_path(fixture: Any) -> Path:
    """``sim.options.control``, else beside the first serial device, else /tmp/labctl-sim/<station>."""
    sim = fixture.sim
    if sim is not None and sim.options.get("control"):
        return Path(str(sim.options["control"]))
    for binding in fixture.roles.values():
        res = binding.resource.strip()
        if res.upper().startswith("ASRL") and res.upper().endswith("::INSTR"):
            res = res[4:-7]
        if res.startswith("/"):
            return Path(res).parent / "control.sock"
    return Path("/tmp/labctl-sim") / fixture.station / "control.sock"


def lab_state(lab: Any, slot: str | None = None) -> dict[str, Any]:
    """What a technician would see on the bench (or in one slot of a rack) right now (JSON-safe)."""
    bench = lab.slot_bench(slot) if slot is not None else lab.bench
    with bench.lock:
        t = bench.update()
        b = bench.board
        ch1 = bench.psu[1]
        return {
            "time": round(t, 3),
            "time_scale": getattr(bench.clock, "scale", 1.0),  # simulated seconds per wall second
            "dut": b.params.serial,
            "variant": b.params.variant,
            "dut_faults": list(b.params.faults),
            "powered": b.powered and not b.latched,
            "latched": b.latched,
            "vin": round(b.input.v, 4),
            "power_good": {n: r.up for n, r in b.rails.items()},
            "workload_percent": round(b.workload * 100, 1),
            "throttled": b.throttled,
            "temperatures": {"die": round(b.die, 2), "hbm": round(b.hbm, 2), "vrm": round(b.vrm, 2),
                             "lid": round(b.lid, 2), "air": round(bench.chamber.air, 2)},
            "chamber": {"setpoint": bench.chamber.setpoint, "at_temperature": bench.chamber.at_temperature},
            "rails": {n: {"V": round(r.voltage, 5), "A": round(r.current, 4), "up": r.up} for n, r in b.rails.items()},
            "psu": {str(n): {"on": c.on, "v_set": c.v_set, "i_set": c.i_set, "V": round(c.v_out, 4),
                             "A": round(c.i_out, 4), "ovp_tripped": c.ovp_tripped, "ocp_tripped": c.ocp_tripped}
                    for n, c in bench.psu.items()},
            "load": {"on": bench.load.on, "mode": bench.load.mode, "A": round(bench.load.i_in, 4)},
            "link_trained": b.link_trained(t),
            "faults": _faults(lab),
            "psu_output_on": ch1.on,
            "slot": slot if slot is not None else (next(iter(lab.rack.bays)) if lab.rack is not None else None),
            "slots": _slots(lab),
        }


def _slots(lab: Any) -> dict[str, Any]:
    """A rack: every slot's board in one line each (empty for a single bench), with the faults
    injected into it: its board's and its own instruments' (``2/psu`` is slot 2's ``psu``)."""
    if lab.rack is None:
        return {}
    faults = _faults(lab)
    out: dict[str, Any] = {}
    for sid, bay in lab.rack.bays.items():
        params, prefix = bay.board.params, f"{sid}/"
        out[sid] = {"dut": params.serial, "variant": params.variant, "dut_faults": list(params.faults),
                    "faults": {role.removeprefix(prefix): kinds for role, kinds in faults.items()
                               if role.startswith(prefix)},
                    "powered": bay.board.powered and not bay.board.latched,
                    "psu_output_on": any(c.on for c in bay.psu.values()), "die": round(bay.board.die, 2)}
    return out


def _faults(lab: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for role, gate in lab.gates.items():
        kinds = [f.kind for f in gate.faults]
        kinds += ["scpi_error"] * len(getattr(lab.instruments[role], "error_rules", []) or [])
        if kinds:
            out[role] = kinds
    return out


class ControlServer:
    def __init__(self, lab: Any, path: Path) -> None:
        self.lab = lab
        self.path = Path(path)
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        sock.listen(4)
        sock.settimeout(POLL)
        self._sock = sock
        self._thread = threading.Thread(target=self._loop, name="sim-control", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            with conn:
                conn.settimeout(5)
                try:
                    data = b""
                    while not data.endswith(b"\n"):
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    reply = self.handle(json.loads(data.decode() or "{}"))
                except (OSError, ValueError) as err:
                    reply = {"ok": False, "error": f"bad request: {err}"}
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps(reply).encode() + b"\n")

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        try:
            if op == "inject":
                self.lab.inject(req["fault"], req.get("slot"))
            elif op == "clear":  # a role's instrument faults; without one, every injected fault
                self.lab.clear_faults(req.get("role"))
                if req.get("role") is None:
                    self.lab.clear_board_faults()
            elif op == "dut":
                self.lab.swap_dut(str(req["serial"]), req.get("slot"))
            elif op == "time_scale":  # the lab's clock only: no update of the bench (what a run asks at its start)
                return {"ok": True, "state": {"time_scale": getattr(self.lab.bench.clock, "scale", 1.0)}}
            elif op != "state":
                return {"ok": False, "error": f"unknown op {op!r}; use inject, clear, dut, state or time_scale"}
            return {"ok": True, "state": lab_state(self.lab, req.get("slot"))}
        except LabctlError as err:
            return {"ok": False, "error": err.format()}
        except KeyError as err:
            return {"ok": False, "error": f"missing {err} in request"}

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with contextlib.suppress(OSError):
            if self.path.is_socket():
                self.path.unlink()


def control_request(path: Path, request: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
    """Send one request to a served lab's control socket and return its state."""
    if not os.path.exists(path):
        raise InstrumentDisconnected(f"no simulated lab is serving here (no control socket {path})",
                                     hint="start one with `labctl sim serve --fixture F`")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as err:
        raise InstrumentDisconnected(f"the simulated lab's control socket {path} does not answer: {err}",
                                     hint="is `labctl sim serve` still running?") from None
    reply = json.loads(data.decode())
    if not reply.get("ok"):
        raise LabctlError(reply.get("error", "the simulated lab refused the request"))
    return reply["state"]
