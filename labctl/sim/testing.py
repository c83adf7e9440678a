"""Helpers for tests that start a simulated lab beside others (and beside ``labctl sim serve``)."""

from __future__ import annotations

import contextlib
import errno
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from labctl.instruments.address import tcp_socket
from labctl.resources import builtin_file, resolve_data_path


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


#: ports this process has handed out lately: fixtures written one after another (eight fleet
#: stations, say) are all chosen before any of their labs binds, so "free now" alone could hand
#: two stations one port (about a 3 % chance for 40 ports) and their jobs would share a bench
_GIVEN: dict[int, None] = {}
_GIVEN_MAX = 8192
_GIVEN_LOCK = threading.Lock()


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open together while chosen), none
    of them handed out by an earlier call in this process (of the last 8,192).

    They are drawn below the kernel's ephemeral range: a port from that range can be taken,
    between choosing and serving, by any outgoing connection's local end (a database client,
    an instrument session), and the simulated lab would then fail with "Address already in use".
    """
    import random

    low, _high = _ephemeral_range()
    top = low - 1 if low > 12000 else 65535
    bottom = 10000 if low > 12000 else 61000
    rng = random.Random()
    socks: list[socket.socket] = []
    with _GIVEN_LOCK:
        try:
            tries = 0
            while len(socks) < count:
                tries += 1
                port = rng.randint(bottom, top)
                if port in _GIVEN:
                    if tries > 50 * count + 1000:
                        raise OSError(errno.EADDRINUSE, f"no free port left in {bottom}-{top}")
                    continue
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    s.close()
                    if tries > 50 * count + 1000:
                        raise
                    continue
                socks.append(s)
            ports = [s.getsockname()[1] for s in socks]
            _GIVEN.update(dict.fromkeys(ports))
            while len(_GIVEN) > min(_GIVEN_MAX, (top - bottom) // 2):
                del _GIVEN[next(iter(_GIVEN))]  # the oldest first
            return ports
        finally:
            for s in socks:
                s.close()


def isolated_fixture(tmp_path: Path, source: str | Path = "sim-bench.yaml", **sim_overrides: Any) -> Path:
    """Write a copy of a fixture with free loopback ports and serial paths under ``tmp_path``.

    ``sim_overrides`` replace keys of the ``sim:`` section, e.g. ``time_scale=600``,
    ``dut="SIM-MARG-0003"`` or ``duts={...}``. Returns the new fixture's path.
    """
    src = Path(source)
    if not src.exists():
        src = builtin_file("fixtures", str(source)) if "/" not in str(source) else resolve_data_path(source, "fixtures")
    data = yaml.safe_load(src.read_text(encoding="utf-8"))
    tmp_path = Path(tmp_path)
    tmp_path.mkdir(parents=True, exist_ok=True)
    # the station's roles, then each slot's own (serial devices named slot-role)
    groups: list[tuple[str, dict[str, Any]]] = [("", data.get("roles") or {})]
    groups += [(f"{slot['id']}-", slot.get("roles") or {}) for slot in data.get("slots") or []]
    bindings = [(prefix + role, b) for prefix, roles in groups for role, b in roles.items()]
    tcp_roles = [r for r, b in bindings if tcp_socket(str(b.get("resource", "")))]
    ports = iter(free_ports(len(tcp_roles)))
    dev_dir = tmp_path / "dev"
    for role, binding in bindings:
        res = str(binding.get("resource", "")).strip()
        tcp = tcp_socket(res)
        if tcp:
            binding["resource"] = tcp.with_port(next(ports))
        elif res.startswith("/") or res.upper().startswith("ASRL"):
            binding["resource"] = str(dev_dir / role)
    sim = dict(data.get("sim") or {})
    sim.update(sim_overrides)
    data["sim"] = sim
    out = tmp_path / f"fixture-{src.stem}.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


@contextlib.contextmanager
def served_lab(fixture: Path, *serve_args: str, timeout: float = 30.0) -> Iterator[subprocess.Popen]:
    """``labctl sim serve --fixture FIXTURE`` in a process of its own, yielded once every role
    answers at its address; stopped (SIGTERM, then kill) afterwards."""
    from labctl.instruments.simstart import address_answers

    data = yaml.safe_load(Path(fixture).read_text(encoding="utf-8")) or {}
    roles = list((data.get("roles") or {}).values())
    roles += [b for slot in data.get("slots") or [] for b in (slot.get("roles") or {}).values()]
    proc = subprocess.Popen([sys.executable, "-m", "labctl", "sim", "serve", "--fixture", str(fixture), *serve_args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timeout
        while not all(address_answers(str(r["resource"])) for r in roles):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"labctl sim serve did not come up: {proc.communicate()}")
            time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
