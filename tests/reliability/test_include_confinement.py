"""`include:` reads only inside the plan's folder tree and the plan libraries, and never shows
what a file that is not a step library holds."""

from __future__ import annotations

import os
from pathlib import Path

from labctl.plan.loader import check_plan

LIB = "steps:\n  - id: w\n    check: wait\n    args: {duration: 1 s}\n"


def _plan(folder: Path, include: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "plan.yaml"
    path.write_text(f"name: p\nsteps:\n  - include: {include}\n", encoding="utf-8")
    return path


def test_a_symlink_out_of_the_tree_is_refused_without_reading(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("password: hunter2\n", encoding="utf-8")
    plans = tmp_path / "plans"
    plans.mkdir()
    (plans / "lib").symlink_to(outside, target_is_directory=True)
    _, errors = check_plan(_plan(plans, "lib/secret.yaml"))
    assert [(e.line, e.column) for e in errors] == [(3, 14)]
    assert "leads outside the plan's folder and the plan libraries" in errors[0].message
    assert "LABCTL_PLAN_LIBRARIES" in errors[0].hint
    assert "hunter2" not in errors[0].format() and "password" not in errors[0].format()


def test_a_file_in_the_tree_that_is_no_library_is_not_echoed(tmp_path):
    (tmp_path / "notes.yaml").write_text("root:x:0:0: hunter2\nsecret_key: swordfish\n", encoding="utf-8")
    _, errors = check_plan(_plan(tmp_path, "notes.yaml"))
    text = "\n".join(e.format() for e in errors)
    assert "notes.yaml is not a step library" in text
    assert "hunter2" not in text and "swordfish" not in text and "secret_key" not in text


def test_a_configured_library_folder_is_allowed_and_searched(tmp_path, monkeypatch):
    shared = tmp_path / "shared-libs"
    shared.mkdir()
    (shared / "warmup.yaml").write_text(LIB, encoding="utf-8")
    plan = _plan(tmp_path / "plans", "warmup.yaml")
    _, errors = check_plan(plan)
    assert "included file not found" in errors[0].message
    monkeypatch.setenv("LABCTL_PLAN_LIBRARIES", os.pathsep.join(["/nonexistent", str(shared)]))
    loaded, errors = check_plan(plan)
    assert errors == [] and [s.id for s in loaded.plan.steps] == ["w"]
    plan.write_text(f"name: p\nsteps:\n  - include: {shared / 'warmup.yaml'}\n", encoding="utf-8")
    loaded, errors = check_plan(plan)
    assert errors == []


def test_the_bundled_library_is_found_from_anywhere(tmp_path):
    loaded, errors = check_plan(_plan(tmp_path, "lib/power-up.yaml"))
    assert [e.format() for e in errors] == []
    assert loaded.plan.steps[0].id == "power_on"
