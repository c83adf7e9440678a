"""The DUT's debug console (board management controller) on a serial line.

Every reply is zero or more lines followed by ``OK`` or ``ERR <message>``. The protocol is
documented in docs/simulated-lab.md and docs/sim-protocols.md.
"""

from __future__ import annotations

from collections.abc import Callable

from labctl.sim.emulators import emulator
from labctl.sim.emulators.base import LineInstrument
from labctl.sim.physics import constants as K
from labctl.sim.physics.dut import stable_seed
from labctl.sim.physics.link import ErrorArrivals, ber_from_q

BOARD = "ACCEL-SIM-X1"
BOOTLOADER = "0.9.3"
PRBS_LENGTHS = (7, 9, 15, 23, 31)
#: Simulated seconds between two samplings of the board's sensors by its controller: ``sensors``
#: answers the last sampling for at most this long, unless something changed the bench since or
#: happened in between (:meth:`Bench.refresh`), like the supply's readback.
TELEMETRY_PERIOD = 0.05


class ConsoleError(Exception):
    pass


@emulator("accel-console")
class AccelConsole(LineInstrument):
    model = BOARD
    default_serial = "SIM-GOLD-0001"

    def reset(self) -> None:
        self._clear_checkers()
        self._checks = 0
        self._arrivals: list[ErrorArrivals] = []
        self._sampled: tuple[int, str] = (-1, "")  # (Bench.solves, reply) of the last sensors sampling
        self._die = (self.bench.board, self.bench.board.boots)  # the die the checkers run on, and its power-up
        if self._on_step not in self.bench.lane_listeners:
            self.bench.lane_listeners.append(self._on_step)

    def _clear_checkers(self) -> None:
        self.checking = False
        self.rx_bits = [0.0] * K.LANES
        self.rx_errors = [0] * K.LANES

    def _follow_die_power(self) -> None:
        """The PRBS checkers are on the die: they stop and lose their counts when it loses power
        (VIN cycled, a brown-out or THERMTRIP, another DUT on the fixture), as a power-up resets them."""
        board = self.bench.board
        die, boots = self._die
        if die is not board or boots != board.boots or not board.powered or board.latched:
            self._clear_checkers()
            self._die = (board, board.boots)

    @property
    def serial_number(self) -> str:
        return self.bench.dut.serial

    # -- on-die PRBS checkers (BERT pattern generator -> DUT receivers) ---------------------------
    def _on_step(self, t0: float, t1: float, qs: Callable[[], list[float]], trained: bool, tx_prbs: int) -> None:
        self._follow_die_power()
        if not (self.checking and trained):
            return
        bits = K.LINE_RATE * (t1 - t0)
        for i, q in enumerate(qs()):
            self.rx_bits[i] += bits
            self.rx_errors[i] += self._arrivals[i].add(bits * ber_from_q(q))

    # -- dispatch -----------------------------------------------------------------------
    def handle(self, line: str) -> str | None:
        words = line.split()
        key = words[0].lower()
        if len(words) > 1 and (key, words[1].lower()) in TWO_WORD:
            fn, args = TWO_WORD[(key, words[1].lower())], words[2:]
        elif key in ONE_WORD:
            fn, args = ONE_WORD[key], words[1:]
        else:
            return f"ERR unknown command '{line.strip()}' (try help)"
        try:
            with self.bench.lock:
                if fn is AccelConsole.cmd_sensors:
                    return self._telemetry(args)
                self.bench.update()
                self._follow_die_power()
                lines = fn(self, args)
        except ConsoleError as err:
            return f"ERR {err}"
        return "\n".join([*lines, "OK"])

    def reads_only(self, line: str) -> bool:
        return line.split(None, 1)[0].lower() == "sensors"

    def _telemetry(self, args: list[str]) -> str:
        """``sensors``: the last sampling of the board's sensors (see :data:`TELEMETRY_PERIOD`)."""
        bench = self.bench
        bench.refresh(TELEMETRY_PERIOD)
        if self._sampled[0] != bench.solves:
            self._sampled = (bench.solves, "\n".join([*self.cmd_sensors(args), "OK"]))
        return self._sampled[1]

    # -- commands -----------------------------------------------------------------------
    def cmd_idn(self, args: list[str]) -> list[str]:
        return [f"labctl,{BOARD},{self.serial_number},{self.bench.dut.firmware}"]

    def cmd_help(self, args: list[str]) -> list[str]:
        return [
            "id | fw | sensors | power-good | link status | link retrain",
            "prbs start [7|9|15|23|31] | prbs stop | prbs status | prbs count",
            "load | load idle | load stress <percent> | perf | reset | *IDN?",
        ]

    def cmd_id(self, args: list[str]) -> list[str]:
        return [f"serial {self.serial_number}", f"board {BOARD}", "rev B"]

    def cmd_fw(self, args: list[str]) -> list[str]:
        return [f"fw {self.bench.dut.firmware}", f"bootloader {BOOTLOADER}"]

    def cmd_sensors(self, args: list[str]) -> list[str]:
        b = self.bench
        board = b.board
        out = [
            f"die_temp {board.die + b.noise(0.25):.1f} degC",
            f"hbm_temp {board.hbm + b.noise(0.25):.1f} degC",
            f"vrm_temp {board.vrm + b.noise(0.25):.1f} degC",
        ]
        for name in ("VDD_CORE", "VDD_IO", "VDD_HBM", "VDD_AUX"):
            r = board.rails[name]
            v = r.voltage + (b.ripple_sample(name) + b.noise(0.0008) if r.up else 0.0)
            i = r.current + (b.noise(0.01) if r.up else 0.0)
            out.append(f"{name}_V {v:.4f} V")
            out.append(f"{name}_I {max(0.0, i):.3f} A")
        out.append(f"throttle {int(board.throttled)} bool")
        if board.throttle_temp is not None:  # the die temperature when throttling last asserted since power-up
            out.append(f"throttle_temp {board.throttle_temp:.1f} degC")
        out.append(f"VIN_V {board.input.v + (b.noise(0.002) if board.input.v > 0 else 0.0):.3f} V")
        out.append(f"powered {int(board.powered and not board.latched)} bool")
        return out

    def cmd_power_good(self, args: list[str]) -> list[str]:
        """ms after VIN came up per rail whose power-good is asserted now; ``off`` for a rail
        whose power-good is not (yet, or no longer: its VRM stopped) and for every rail while
        the board is off (VIN below UVLO, or shut down by a trip until VIN is cycled);
        ``never`` for a rail the sequencer waits for in vain."""
        board = self.bench.board
        running = board.powered and not board.latched
        out = []
        for rail, up in zip(K.RAILS, board.rails_up(self.bench.t), strict=True):
            t = board.pg_ms.get(rail.name)
            # a VRM's power-good drops while its output is below the PG threshold (current limit)
            good = up and board.rails[rail.name].voltage >= K.PG_FRACTION * rail.nominal
            state = f"{t:.2f} ms" if good and t is not None else "never" if running and t is None else "off"
            out.append(f"{rail.name} {state}")
        return out

    def cmd_link_status(self, args: list[str]) -> list[str]:
        b = self.bench
        board = b.board
        now = b.t
        if board.link_trained(now):
            speed, width, state = K.LINK_SPEED_GTS, f"x{K.LANES}", "L0"
        elif board.rail_up("VDD_IO", now) and now < board.retrain_until:
            speed, width, state = K.LINK_SPEED_GTS, f"x{K.LANES}", "RCVRY_LOCK"
        else:
            speed, width, state = 0.0, "x0", "DETECT_QUIET"
        head = f"speed {speed:.1f} GT/s width {width} ltssm {state}"
        return [f"link {head}"] + [f"lane {i} {head}" for i in range(1, K.LANES + 1)]

    def cmd_link_retrain(self, args: list[str]) -> list[str]:
        board = self.bench.board
        if not board.rail_up("VDD_IO", self.bench.t):
            raise ConsoleError("link retrain: VDD_IO is not up")
        board.retrain_until = self.bench.t + K.RETRAIN_S
        return []

    def cmd_prbs_start(self, args: list[str]) -> list[str]:
        n = K.DEFAULT_PRBS
        if args:
            try:
                n = int(args[0].upper().removeprefix("PRBS"))
            except ValueError:
                n = -1
            if n not in PRBS_LENGTHS:
                raise ConsoleError(f"prbs length must be one of {' '.join(map(str, PRBS_LENGTHS))}")
        self.bench.board.tx_prbs = n
        self._clear_checkers()
        self._sampled = (-1, "")
        self._checks += 1  # each start of the checkers draws its own error arrivals
        self._arrivals = [ErrorArrivals(stable_seed(self.bench.seed, "bit errors", self.bench.dut.serial, "rx", i,
                                                    self._checks)) for i in range(K.LANES)]
        self.checking = True
        return []

    def cmd_prbs_stop(self, args: list[str]) -> list[str]:
        self.checking = False
        return []

    def cmd_prbs_status(self, args: list[str]) -> list[str]:
        return [f"prbs {'running' if self.checking else 'stopped'}"]

    def cmd_prbs_count(self, args: list[str]) -> list[str]:
        return [f"lane {i + 1} bits {round(self.rx_bits[i])} errors {self.rx_errors[i]}" for i in range(K.LANES)]

    def cmd_load(self, args: list[str]) -> list[str]:
        board = self.bench.board
        if not args:
            return [f"load {round(board.workload * 100)} %"]
        mode = args[0].lower()
        if mode == "idle" and len(args) == 1:
            board.workload = 0.0
            return []
        if mode == "stress" and len(args) == 2:
            try:
                pct = float(args[1].rstrip("%"))
            except ValueError:
                pct = -1.0
            if not 0.0 <= pct <= 100.0:
                raise ConsoleError("percent must be 0..100")
            if pct > 0 and not board.rail_up("VDD_CORE", self.bench.t):
                raise ConsoleError("load: VDD_CORE is not up")  # (stress 0 is idle: always possible)
            board.workload = pct / 100.0
            return []
        raise ConsoleError("usage: load | load idle | load stress <percent>")

    def cmd_perf(self, args: list[str]) -> list[str]:
        board = self.bench.board
        tops = board.throughput_tops(self.bench.t)
        tops = max(0.0, tops * (1.0 + self.bench.noise(0.002))) if tops else 0.0
        return [f"ops {int(board.ops)} count", f"throughput {tops:.1f} TOPS"]

    def cmd_reset(self, args: list[str]) -> list[str]:
        self.bench.board.reset(self.bench.t)
        self._clear_checkers()
        self._sampled = (-1, "")
        return []


Handler = Callable[[AccelConsole, list[str]], list[str]]
ONE_WORD: dict[str, Handler] = {
    "*idn?": AccelConsole.cmd_idn,
    "help": AccelConsole.cmd_help,
    "id": AccelConsole.cmd_id,
    "fw": AccelConsole.cmd_fw,
    "sensors": AccelConsole.cmd_sensors,
    "power-good": AccelConsole.cmd_power_good,
    "load": AccelConsole.cmd_load,
    "perf": AccelConsole.cmd_perf,
    "reset": AccelConsole.cmd_reset,
}
TWO_WORD: dict[tuple[str, str], Handler] = {
    ("link", "status"): AccelConsole.cmd_link_status,
    ("link", "retrain"): AccelConsole.cmd_link_retrain,
    ("prbs", "start"): AccelConsole.cmd_prbs_start,
    ("prbs", "stop"): AccelConsole.cmd_prbs_stop,
    ("prbs", "count"): AccelConsole.cmd_prbs_count,
    ("prbs", "status"): AccelConsole.cmd_prbs_status,
}
