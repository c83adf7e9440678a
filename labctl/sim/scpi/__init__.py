"""The SCPI layer of the simulated lab: parser, command tree, error queue, instrument base."""

from labctl.sim.scpi.errors import ErrorQueue, ScpiError
from labctl.sim.scpi.instrument import ScpiInstrument
from labctl.sim.scpi.tree import Call, scpi

__all__ = ["Call", "ErrorQueue", "ScpiError", "ScpiInstrument", "scpi"]
