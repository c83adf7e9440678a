"""SCPI status registers: the QUEStionable group an emulator reports its protection trips in.

A register group (SCPI-99 vol. 1 ch. 9) is a condition register (what is true now), transition
filters (which edges of a condition latch: PTRansition rising, NTRansition falling), an event
register (the latched edges, cleared by reading it and by ``*CLS``) and an enable mask; its
summary (event AND enable) is bit 3 (QUES, 8) of the status byte.

:class:`QuestionableStatus` adds ``STATus:QUEStionable[:EVENt]? / :CONDition? / :ENABle /
:PTRansition / :NTRansition`` and ``STATus:PRESet`` to an emulator that says which registers a
command addresses (:meth:`QuestionableStatus.questionable_for`: a supply's channels, a load's one
input) and brings their conditions up to date (:meth:`QuestionableStatus.refresh_questionable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from labctl.sim.scpi.errors import STB_MSS
from labctl.sim.scpi.tree import Call, scpi

STB_QUES = 8  # status byte bit 3: questionable summary
REGISTER_MASK = 0x7FFF  # 16-bit registers whose bit 15 is always 0
PTR_PRESET, NTR_PRESET, ENABLE_PRESET = REGISTER_MASK, 0, 0


@dataclass
class StatusRegister:
    """One register group: condition, transition filters, event, enable."""

    condition: int = 0
    event: int = 0
    enable: int = ENABLE_PRESET
    ptr: int = PTR_PRESET
    ntr: int = NTR_PRESET

    def update(self, condition: int) -> None:
        """The condition is now ``condition``: latch its edges that pass the filters."""
        rising = condition & ~self.condition
        falling = self.condition & ~condition
        self.event |= (rising & self.ptr) | (falling & self.ntr)
        self.condition = condition

    def read_event(self) -> int:
        """The event register; reading it clears it."""
        value, self.event = self.event, 0
        return value

    @property
    def summary(self) -> bool:
        return bool(self.event & self.enable)

    def preset(self) -> None:
        """``STATus:PRESet``: enable off, positive transitions only (events are kept)."""
        self.enable, self.ptr, self.ntr = ENABLE_PRESET, PTR_PRESET, NTR_PRESET


def _mask(call: Call) -> int:
    return int(call.number(0, minimum=0, maximum=65535)) & REGISTER_MASK


class QuestionableStatus:
    """Mixin (before the instrument base): the STATus:QUEStionable subsystem."""

    sre: int

    def questionable_for(self, call: Call | None) -> list[StatusRegister]:
        """The registers ``call`` addresses (all of them for None)."""
        raise NotImplementedError

    def refresh_questionable(self) -> None:
        """Bring every register's condition up to now (trips judged, edges latched)."""

    def _ques(self, call: Call, read: Any) -> str:
        self.refresh_questionable()
        return ",".join(str(read(reg)) for reg in self.questionable_for(call))

    def _ques_set(self, call: Call, name: str) -> None:
        value = _mask(call)
        for reg in self.questionable_for(call):
            setattr(reg, name, value)

    @scpi("STATus:QUEStionable[:EVENt]?")
    def _stat_ques_event_q(self, call: Call) -> str:
        return self._ques(call, StatusRegister.read_event)

    @scpi("STATus:QUEStionable:CONDition?")
    def _stat_ques_cond_q(self, call: Call) -> str:
        return self._ques(call, lambda reg: reg.condition)

    @scpi("STATus:QUEStionable:ENABle")
    def _stat_ques_enable(self, call: Call) -> None:
        self._ques_set(call, "enable")

    @scpi("STATus:QUEStionable:ENABle?")
    def _stat_ques_enable_q(self, call: Call) -> str:
        return self._ques(call, lambda reg: reg.enable)

    @scpi("STATus:QUEStionable:PTRansition")
    def _stat_ques_ptr(self, call: Call) -> None:
        self._ques_set(call, "ptr")

    @scpi("STATus:QUEStionable:PTRansition?")
    def _stat_ques_ptr_q(self, call: Call) -> str:
        return self._ques(call, lambda reg: reg.ptr)

    @scpi("STATus:QUEStionable:NTRansition")
    def _stat_ques_ntr(self, call: Call) -> None:
        self._ques_set(call, "ntr")

    @scpi("STATus:QUEStionable:NTRansition?")
    def _stat_ques_ntr_q(self, call: Call) -> str:
        return self._ques(call, lambda reg: reg.ntr)

    @scpi("STATus:PRESet")
    def _stat_preset(self, call: Call) -> None:
        for reg in self.questionable_for(None):
            reg.preset()

    def _c_cls(self, p: list[str]) -> None:
        super()._c_cls(p)  # type: ignore[misc]
        self.refresh_questionable()
        for reg in self.questionable_for(None):
            reg.event = 0

    def status_byte(self) -> int:
        stb = super().status_byte()  # type: ignore[misc]
        self.refresh_questionable()
        if any(reg.summary for reg in self.questionable_for(None)):
            stb |= STB_QUES
            if stb & self.sre & ~STB_MSS:
                stb |= STB_MSS
        return stb
