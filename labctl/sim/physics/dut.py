"""One DUT's parameters: nominal constants, seeded process variation, variant and faults."""

from __future__ import annotations

import copy
import hashlib
import random
from dataclasses import dataclass, field, fields
from typing import Any

from labctl.sim.physics import constants as K


def stable_seed(*parts: object) -> int:
    """A seed that is the same in every process (unlike ``hash(str)``)."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass
class LaneParams:
    q0: float
    tempco: float = K.Q_TEMPCO
    temp_scale: float | None = None  # degC; None: linear in temperature


@dataclass
class DutParams:
    serial: str
    variant: str = "golden"
    rail_offset: dict[str, float] = field(default_factory=dict)  # fraction of nominal
    ripple_mvpp: dict[str, float] = field(default_factory=dict)
    seq_delay_ms: dict[str, float] = field(default_factory=dict)
    dead_rails: set[str] = field(default_factory=set)
    theta_die: float = K.THETA_DIE
    leak_25c: float = K.CORE_LEAK_25C
    loss_scale: float = 1.0
    peak_tops: float = K.PEAK_TOPS
    lanes: list[LaneParams] = field(default_factory=list)
    overtemp: bool = False
    soft_start_slew: float = K.SOFT_START_SLEW  # V/s of VIN at power-up (hot-swap soft start)
    firmware: str = "1.4.2"
    faults: list[str] = field(default_factory=list)  # names of the DUT faults applied, each once
    fault_specs: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> its parameters, as applied
    _pristine: DutParams | None = field(default=None, repr=False, compare=False)  # before any fault

    @classmethod
    def build(cls, serial: str, seed: int, variant: str = "golden") -> DutParams:
        rng = random.Random(stable_seed(seed, serial))
        p = cls(serial=serial, variant=variant)
        for rail in K.RAILS:
            p.rail_offset[rail.name] = rng.gauss(0.0, K.SIGMA_RAIL_OFFSET)
            p.ripple_mvpp[rail.name] = rail.ripple_mvpp * max(0.5, rng.gauss(1.0, K.SIGMA_RIPPLE))
            p.seq_delay_ms[rail.name] = rail.pg_delay_ms * max(0.5, rng.gauss(1.0, K.SIGMA_SEQ))
        p.theta_die = K.THETA_DIE * rng.gauss(1.0, K.SIGMA_THETA)
        p.leak_25c = K.CORE_LEAK_25C * max(0.5, rng.gauss(1.0, K.SIGMA_LEAK))
        p.loss_scale = max(0.7, rng.gauss(1.0, K.SIGMA_LOSS))
        p.peak_tops = K.PEAK_TOPS * rng.gauss(1.0, K.SIGMA_TOPS)
        p.lanes = [LaneParams(q0=rng.gauss(K.Q0, K.SIGMA_Q0)) for _ in range(K.LANES)]
        if variant == "fast_corner":  # leaky, fast silicon
            p.leak_25c *= 1.3
        elif variant == "slow_corner":
            p.leak_25c *= 0.75
            p.peak_tops *= 0.97
        return p

    # -- board-level faults ------------------------------------------------------------
    def apply_fault(self, name: str, spec: dict[str, Any]) -> None:
        """Apply a DUT fault (raises ValueError for bad parameters, leaving the DUT as it was).
        A fault applied again replaces its parameters (``hot_spot`` twice is one hot spot, with
        the second one's factor), as re-running a fault injection does on a bench."""
        self._reapply({**self.fault_specs, name: dict(spec)})

    def _reapply(self, specs: dict[str, dict[str, Any]]) -> None:
        """The DUT before any fault with ``specs`` applied in order, or ValueError and no change."""
        pristine = self._pristine
        if pristine is None:
            pristine = copy.deepcopy(self)
            pristine.faults, pristine.fault_specs = [], {}
        trial = copy.deepcopy(pristine)
        for name, spec in specs.items():
            trial._apply(name, spec)
        for f in fields(self):
            if f.name not in _BOOKKEEPING:
                setattr(self, f.name, getattr(trial, f.name))
        self._pristine, self.fault_specs, self.faults = pristine, specs, list(specs)

    def _apply(self, name: str, spec: dict[str, Any]) -> None:
        if name == "marginal_lane":
            lane = int(spec.get("lane", 3))
            if not 1 <= lane <= K.LANES:
                raise ValueError(f"marginal_lane: lane must be 1..{K.LANES}, got {lane}")
            self.lanes[lane - 1] = LaneParams(
                q0=float(spec.get("q0", K.MARGINAL_Q0)),
                tempco=float(spec.get("tempco", K.MARGINAL_TEMPCO)),
                temp_scale=float(spec.get("temp_scale", K.MARGINAL_TEMP_SCALE)),
            )
        elif name == "hot_spot":
            self.theta_die *= float(spec.get("factor", 1.4))
        elif name == "dead_rail":
            rail = _rail(spec.get("rail", "VDD_HBM"))
            self.dead_rails.add(rail)
        elif name == "slow_sequencing":
            factor = float(spec.get("factor", 10.0))
            for rail in self.seq_delay_ms:
                self.seq_delay_ms[rail] *= factor
        elif name == "noisy_rail":
            rail = _rail(spec.get("rail", "VDD_CORE"))
            self.ripple_mvpp[rail] = float(spec.get("ripple_mvpp", 60.0))
        elif name == "overtemp":
            self.overtemp = True
        elif name == "no_soft_start":  # the hot-swap's soft-start capacitor is missing
            slew = float(spec.get("slew", K.SUPPLY_SLEW))
            if not slew > 0:
                raise ValueError(f"no_soft_start: slew must be > 0 V/s, got {slew}")
            self.soft_start_slew = slew
        else:
            raise ValueError(f"unknown DUT fault {name!r}")


_BOOKKEEPING = frozenset({"faults", "fault_specs", "_pristine"})


def _rail(name: object) -> str:
    text = str(name).upper()
    if text not in K.RAIL_NAMES:
        raise ValueError(f"unknown rail {name!r}; expected one of {', '.join(K.RAIL_NAMES)}")
    return text
