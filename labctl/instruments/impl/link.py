"""Link tester (BERT) served by a profile; lanes are the profile's channels."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from labctl.errors import InstrumentError
from labctl.instruments.impl.base import RoleImpl
from labctl.instruments.roles import BerResult


def prbs_order(pattern: str | int) -> int:
    """``PRBS31``, ``prbs 31``, ``31`` → 31."""
    m = re.fullmatch(r"\s*(?:PRBS\s*-?)?(\d+)\s*", str(pattern), re.IGNORECASE)
    if not m:
        raise InstrumentError(f"unknown pattern {pattern!r}", hint="use PRBS7, PRBS9, PRBS15, PRBS23 or PRBS31")
    return int(m.group(1))


class ProfileLinkTester(RoleImpl):
    kind = "link_tester"

    @property
    def lanes(self) -> list[str]:
        return list(self.profile.channels.ids) or ["1"]

    def configure(self, pattern: str, rate_gbps: float | None = None, lanes: Sequence[str] | None = None) -> None:
        order = prbs_order(pattern)
        for lane in lanes or self.lanes:
            self._set("pattern", order, lane)
            if rate_gbps is not None:
                self._set("rate", float(rate_gbps) * 1e9, lane)

    def set_gating(self, seconds: float | None, lanes: Sequence[str] | None = None) -> None:
        for lane in lanes or self.lanes:
            if seconds is None:
                self.driver.call("gating", channel=lane, mode="UNT", d=0, h=0, m=0, s=0)
                continue
            total = max(1, int(math.ceil(seconds)))
            d, rest = divmod(total, 86400)
            h, rest = divmod(rest, 3600)
            m, s = divmod(rest, 60)
            self.driver.call("gating", channel=lane, mode="SING", d=d, h=h, m=m, s=s)

    def start(self) -> None:
        self.driver.call("start")

    def stop(self) -> None:
        self.driver.call("stop")

    def running(self, lane: str | None = None) -> bool:
        lanes = [lane] if lane is not None else self.lanes
        return any(self._get("running", ln) for ln in lanes)

    def results(self, lane: str | None = None) -> BerResult:
        ln = self.driver.channel(lane)
        errors = int(self._get("error_count", ln))
        bits = int(self._get("bit_count", ln))
        sync = bool(self._get("sync_loss_s", ln)) if self.has("sync_loss_s") else False
        ber = errors / bits if bits else math.nan
        return BerResult(errors=errors, bits=bits, ber=ber, sync_loss=sync or bits == 0, lane=ln)

    def eye(self, lane: str | None = None) -> dict[str, float]:
        ln = self.driver.channel(lane)
        out: dict[str, float] = {}
        for key in ("eye_height", "eye_width"):
            if self.has(key):
                out[key.removeprefix("eye_")] = float(self._get(key, ln))
        return out
