"""A value given as '' (a script's `--dut "$SERIAL"` with the variable unset) is refused in one
line, never read as "not given" (the console's serial, the login name, the default file) nor
as a DUT without a serial; a time scale must be a finite number."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(("args", "says"), [
    (["run", "smoke.yaml", "--dut", ""], "--dut is empty"),
    (["run", "smoke.yaml", "--operator", " "], "--operator is empty"),
    (["run", "smoke.yaml", "--slots", ""], "--slots is empty"),  # it had run as if not given
    (["queue", "submit", "smoke.yaml", "--dut", "", "--db", "q.db"], "--dut is empty"),
    (["sim", "dut", ""], "SERIAL is empty"),
    (["sim", "serve", "--time-scale", "nan"], "--time-scale nan: it must lie between 0.001 and 10000"),
    (["sim", "serve", "--time-scale", "inf"], "--time-scale inf: it must lie between 0.001 and 10000"),
])
def test_an_empty_or_impossible_value_is_a_one_line_usage_error(labctl, tmp_path, args, says):
    res = labctl(*args, cwd=tmp_path)
    assert res.returncode == 4, res.stdout + res.stderr
    assert says in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "q.db").exists()
