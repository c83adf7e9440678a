"""The ``sim:`` section of a fixture: how the simulated lab serves this station."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from labctl.sim.faults import ALL_FAULTS, VARIANTS


def _known_fault(name: str) -> str:
    if name not in ALL_FAULTS:
        raise ValueError(f"unknown fault {name!r}; known: {', '.join(ALL_FAULTS)}")
    return name


def _check_fault_list(value: Any) -> Any:
    """Check fault names before the items are typed (one clear error per bad name)."""
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                _known_fault(item)
            elif isinstance(item, dict) and isinstance(item.get("fault"), str):
                _known_fault(item["fault"])
    return value


class FaultSpec(BaseModel):
    """One injectable fault, e.g. ``{fault: marginal_lane, lane: 3}``.

    Extra keys are the fault's parameters; the simulated lab checks them.
    """

    model_config = ConfigDict(extra="allow")

    fault: str = Field(description="fault name, e.g. marginal_lane, hot_spot, dead_rail")

    @field_validator("fault")
    @classmethod
    def _check_fault(cls, value: str) -> str:
        return _known_fault(value)


class SimDut(BaseModel):
    model_config = ConfigDict(extra="forbid")

    variant: str = Field("golden", description="named DUT variant")
    faults: list[FaultSpec | str] = Field(default_factory=list)

    @field_validator("variant")
    @classmethod
    def _check_variant(cls, value: str) -> str:
        if value not in VARIANTS:
            raise ValueError(f"unknown variant {value!r}; known: {', '.join(VARIANTS)}")
        return value

    @field_validator("faults", mode="before")
    @classmethod
    def _check_faults(cls, value: Any) -> Any:
        return _check_fault_list(value)


class SimConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(True, description="start the simulated lab in-process when nothing serves")
    time_scale: float = Field(1.0, gt=0, description="simulated seconds per wall second")
    seed: int = Field(0, description="seed of the DUT population and of reading noise")
    ambient: str = Field("25 degC", description="room temperature")
    dut: str | None = Field(None, description="serial of the DUT on the bench by default")
    duts: dict[str, SimDut] = Field(default_factory=dict, description="DUT serials and their variants/faults")
    faults: list[FaultSpec | str] = Field(default_factory=list, description="bench-level faults")
    slots: dict[str, str] = Field(default_factory=dict,
                                  description="slot id -> serial of the DUT in that slot (others: SIM-SLOT-<id>)")
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("faults", mode="before")
    @classmethod
    def _check_faults(cls, value: Any) -> Any:
        return _check_fault_list(value)
