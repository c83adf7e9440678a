"""Fixtures written one after another get ports of their own: ``free_ports`` never hands out a
port it gave earlier in the process (fleet tests write eight stations' fixtures before any of
their labs binds; two stations on one port shared a bench and re-queued each other's jobs)."""

from __future__ import annotations

import socket

from labctl.sim.testing import free_ports, isolated_fixture


def test_successive_calls_never_repeat_a_port():
    ports = [p for _ in range(1000) for p in free_ports(2)]
    assert len(set(ports)) == len(ports) == 2000  # without the memory: ~2000²/45,000 repeats expected


def test_the_ports_are_free_to_bind():
    for port in free_ports(5):
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_eight_isolated_stations_share_no_port(tmp_path):
    import yaml

    seen: list[str] = []
    for i in range(8):
        data = yaml.safe_load(isolated_fixture(tmp_path / f"st-{i}").read_text())
        seen += [str(b["resource"]) for b in data["roles"].values() if "SOCKET" in str(b["resource"])]
    assert len(seen) == len(set(seen)) == 40
