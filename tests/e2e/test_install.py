"""A regular (non-editable) install still finds the built-in drivers, fixtures and plans."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """Build the wheel as `pip install .` would and unpack it into a private folder."""
    tmp = tmp_path_factory.mktemp("install")
    wheels = tmp / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("labctl-*.whl")
    target = tmp / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def _run_installed(target: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(target))
    return subprocess.run(
        [sys.executable, "-m", "labctl", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_wheel_ships_the_data_folders(installed: Path):
    data = installed / "labctl" / "_data"
    for folder, example in (
        ("fixtures", "sim-bench.yaml"),
        ("testplans", "smoke.yaml"),
        ("drivers", "keysight-e36312a.yaml"),
    ):
        assert (data / folder / example).is_file(), f"{folder}/{example} missing from the wheel"


def test_installed_package_resolves_builtin_data_outside_the_checkout(installed: Path, tmp_path: Path):
    code = (
        "import labctl.resources as r; "
        "print(r.data_dir('fixtures')); "
        "print(r.resolve_data_path('fixtures/sim-bench.yaml', 'fixtures'))"
    )
    env = dict(os.environ, PYTHONPATH=str(installed))
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    fixtures_dir, resolved = res.stdout.split()
    assert Path(fixtures_dir).is_relative_to(installed)
    assert Path(resolved).is_file() and Path(resolved).is_relative_to(installed)


def test_installed_labctl_validates_builtin_plans_from_elsewhere(installed: Path, tmp_path: Path):
    res = _run_installed(installed, tmp_path, "validate", "testplans/smoke.yaml", "--fixture", "sim-bench.yaml")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "smoke" in res.stdout


def test_wheel_lists_console_script(installed: Path):
    (dist_info,) = installed.glob("labctl-*.dist-info")
    entry_points = (dist_info / "entry_points.txt").read_text()
    assert "labctl = labctl.cli:main" in entry_points
