"""Nominal constants of the virtual accelerator board and its bench.

Every number here is documented in docs/simulated-lab.md; change both together.
"""

from __future__ import annotations

from dataclasses import dataclass

# Board input (PSU CH1 -> VIN)
VIN_NOMINAL = 5.0  # V
VIN_UVLO = 4.5  # V at the board connector: the board turns on at or above this (rising)
VIN_UVLO_FALL = 4.4  # V at the board connector: a running board turns off below this (hysteresis)
LEAD_RESISTANCE = 0.02  # ohm, PSU terminals to board connector
STANDBY_POWER = 0.15  # W drawn by the board controller whenever VIN is up

# Input node: the board's bulk input capacitance behind a hot-swap controller with soft start.
INPUT_CAPACITANCE = 6.8e-3  # F
SOFT_START_SLEW = 200.0  # V/s: the hot-swap controller ramps VIN (0 -> 5 V in 25 ms)
SUPPLY_SLEW = 5000.0  # V/s: the bench supply's own up-programming slew (no soft start: 1 ms to 5 V)
INPUT_DISCHARGE_TAU = 0.002  # s: VIN at the board falls to a lower supply voltage (output off, setpoint down)
VIN_STEP_FOLLOW = 0.1  # V: smaller changes of VIN (the lead's drop, small setpoint steps) follow at once


@dataclass(frozen=True)
class RailSpec:
    name: str
    nominal: float  # V
    load_line: float  # ohm (droop per amp)
    loss_fixed: float  # W, VRM losses: fixed + a*I + b*I^2
    loss_a: float  # V
    loss_b: float  # ohm
    pg_delay_ms: float  # after the previous rail's power-good
    ripple_mvpp: float  # golden ripple, mV peak-to-peak
    limit_a: float  # VRM current limit
    decay_ms: float  # time constant of the rail falling when its VRM stops (output caps into the load)


# Sequencing order is the order of this tuple.
RAILS: tuple[RailSpec, ...] = (
    RailSpec("VDD_AUX", 3.30, 0.010, 0.05, 0.02, 0.010, 1.5, 4.0, 3.0, 20.0),
    RailSpec("VDD_CORE", 0.75, 0.0002, 0.15, 0.03, 0.004, 3.0, 3.0, 25.0, 5.0),
    RailSpec("VDD_IO", 0.90, 0.002, 0.05, 0.02, 0.010, 3.0, 3.0, 4.0, 10.0),
    RailSpec("VDD_HBM", 1.20, 0.002, 0.06, 0.02, 0.008, 3.0, 3.0, 6.0, 10.0),
)
RAIL_NAMES = tuple(r.name for r in RAILS)

# Rail currents (A): CORE = leak(T) + idle + dyn*workload ; the rest linear in workload.
CORE_LEAK_25C = 1.2  # A at 25 degC die
CORE_LEAK_TEMP_SCALE = 60.0  # degC per e-fold
CORE_IDLE = 0.5
CORE_DYN_MAX = 9.5
IO_BASE = 0.3
IO_LINK = 0.9  # when the link is trained
IO_DYN_MAX = 0.4
HBM_BASE = 0.5
HBM_DYN_MAX = 2.0
AUX_BASE = 0.25
#: a VRM's power-good is asserted while its output is at least this share of its nominal
PG_FRACTION = 0.9

# Thermal (degC/W, J/K, s): die <- core + io power, and die -> lid -> air (a chain: the die's heat
# leaves through the lid); hbm <- hbm power + die coupling; vrm <- VRM losses
THETA_DIE = 1.25  # die to air, through the lid
LID_FRACTION = 0.85  # share of THETA_DIE from the lid to the air (the rest is die to lid): at steady state
# the lid thermocouple sees this fraction of the die's rise
DIE_HEAT_CAPACITY = 10.0  # J/K: die and substrate
LID_HEAT_CAPACITY = 36.0  # J/K: lid and what it holds of the heat sink; with THETA_DIE the die's step
# response reaches 63 % in 45 s (modes of 49 s and 1.5 s), the lid's in 51 s
THETA_HBM = 2.5
HBM_DIE_COUPLING = 0.3
TAU_HBM = 60.0
THETA_VRM = 8.0
TAU_VRM = 40.0
THROTTLE_ON = 105.0
THROTTLE_OFF = 95.0
THROTTLE_CAP = 0.5  # workload cap while throttled
THERMTRIP = 125.0
OVERTEMP_THETA_GAIN = 2.5  # overtemp: theta rises to (1 + gain) x with time constant below
OVERTEMP_TAU = 300.0

# Link: 8 lanes, 32 GT/s NRZ (PCIe Gen5-like)
LANES = 8
LINE_RATE = 32e9  # bit/s per lane
LINK_SPEED_GTS = 32.0
Q0 = 9.0  # Q factor at 25 degC die, nominal IO rail
Q_TEMPCO = 0.0008  # fractional Q loss per degC of die above 25
Q_VIO_SENS = 6.0  # fractional Q loss per fractional IO-rail undervoltage
MARGINAL_Q0 = 9.17
MARGINAL_TEMPCO = 0.0150
MARGINAL_TEMP_SCALE = 35.0  # degC: the marginal lane's degradation saturates (eye nearly closed)
EYE_MV_PER_Q = 12.5
EYE_UI_PER_Q = 0.065
Q_EYE = 3.09  # Q at BER 1e-3: the contour at which the BERT reports eye height and width
SYNC_LOSS_BER = 1e-2  # an ED sampling where the BER is above this loses pattern sync
RETRAIN_S = 0.05
DEFAULT_PRBS = 31

# Workload throughput
PEAK_TOPS = 120.0

# Chamber air (ThermoStream)
AIR_TAU = 20.0  # s
CHAMBER_CAPACITY_W = 8000.0  # board heat the chamber's air handler holds its setpoint against
CHAMBER_OVERLOAD_K_PER_W = 0.01  # air rise per watt beyond that capacity
AIR_NOISE = 0.05  # degC

# Variation (sigma, fraction unless noted)
SIGMA_RAIL_OFFSET = 0.0015
SIGMA_THETA = 0.04
SIGMA_LEAK = 0.10
SIGMA_LOSS = 0.05
SIGMA_Q0 = 0.15  # absolute
SIGMA_SEQ = 0.10
SIGMA_RIPPLE = 0.10
SIGMA_TOPS = 0.01
