"""The DUT's debug console served by a profile (line protocol ending in OK / ERR)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from labctl.errors import InstrumentReplyError
from labctl.instruments.impl.base import RoleImpl
from labctl.instruments.impl.link import prbs_order
from labctl.instruments.parsers import quoted
from labctl.instruments.roles import BerResult


class ProfileDutConsole(RoleImpl):
    kind = "dut_console"

    def send(self, command: str) -> str:
        """Send one console command; its reply lines (without the final OK). ERR raises."""
        return self.driver.query(command)

    def expect(self, command: str, pattern: str) -> re.Match[str]:
        reply = self.send(command)
        m = re.search(pattern, reply, re.MULTILINE)
        if not m:
            raise InstrumentReplyError(f"reply {quoted(reply)} does not match /{pattern}/", instrument=self.name,
                                       command=command)
        return m

    def identify(self) -> dict[str, str]:
        return {k: str(v) for k, v in self._get("board_identity").items()}

    def sensors(self) -> dict[str, float]:
        return {k: v for k, v in self._get("sensors").items() if isinstance(v, int | float)}

    def power_good_times(self) -> dict[str, float | None]:
        """Milliseconds after VIN at which each rail's power-good came up (None = never)."""
        return {k: (float(v) if isinstance(v, int | float) else None) for k, v in self._get("power_good").items()}

    def power_good(self) -> dict[str, bool]:
        return {k: v is not None for k, v in self.power_good_times().items()}

    def link_status(self, lane: str | None = None) -> dict[str, Any]:
        records = self._get("link_status")
        link: dict[str, Any] = {"lanes": {}}
        for rec in records:
            info = {"speed_gts": float(rec["speed"]), "width": int(rec["width"]), "ltssm": rec["ltssm"]}
            if rec.get("lane") is None:
                link.update(info)
            else:
                link["lanes"][str(rec["lane"])] = info
        if lane is not None:
            key = self.driver.channel(lane)
            if key not in link["lanes"]:
                raise InstrumentReplyError(f"no status for lane {lane}", instrument=self.name, command="link status")
            return link["lanes"][key]
        return link

    def prbs_start(self, pattern: str | int = 31, lanes: Sequence[str] | None = None) -> None:
        self.driver.call("prbs_start", order=prbs_order(pattern))

    def prbs_stop(self) -> None:
        self.driver.call("prbs_stop")

    def prbs_counters(self) -> dict[str, BerResult]:
        out: dict[str, BerResult] = {}
        for rec in self._get("prbs_counters"):
            bits, errors = int(rec["bits"]), int(rec["errors"])
            lane = str(rec["lane"])
            out[lane] = BerResult(errors=errors, bits=bits, ber=errors / bits if bits else float("nan"), lane=lane)
        return out

    def set_load(self, percent: float) -> None:
        self._set("load", percent)

    def load(self) -> float:
        return float(self._get("load"))

    def perf(self) -> dict[str, float]:
        return {k: float(v) for k, v in self._get("perf").items() if isinstance(v, int | float)}
