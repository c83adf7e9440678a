"""`labctl validate` / `labctl run` refuse a plan whose `steps:` is an empty list, a step
library with `steps: []`, and a plan with no step at all: each once, located, with a hint."""

from __future__ import annotations

ONE_STEP = "  - {id: w, check: wait, args: {duration: 1 s}}\n"


def test_an_empty_steps_list_is_refused_at_the_brackets(labctl, tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nsetup:\n" + ONE_STEP + "steps: []\n", encoding="utf-8")
    res = labctl("validate", str(plan))
    assert res.returncode == 4, res.stdout
    assert res.stderr.splitlines() == [
        f"{plan}:4:8: steps: is an empty list: the plan has no steps there",
        "  hint: add at least one step, e.g. - {id: settle, check: wait, args: {duration: 1 s}}; "
        "a plan with only setup: and teardown: leaves steps: out",
        "1 problem in 1 file",
    ]
    run = labctl("run", str(plan))
    assert run.returncode == 4 and f"{plan}:4:8: steps: is an empty list" in run.stderr


def test_a_plan_with_only_setup_and_no_steps_key_is_valid(labctl, tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nsetup:\n" + ONE_STEP, encoding="utf-8")
    res = labctl("validate", str(plan))
    assert res.returncode == 0, res.stderr
    assert "1 steps (1 setup, 0 steps, 0 teardown)" in res.stdout


def test_a_plan_with_nothing_to_run_is_refused(labctl, tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\ndescription: forgot the steps\n", encoding="utf-8")
    res = labctl("validate", str(plan))
    assert res.returncode == 4
    assert res.stderr.splitlines()[0] == f"{plan}:1:1: the plan has no steps: nothing to run"


def test_an_empty_step_library_is_refused_in_the_library_once(labctl, tmp_path):
    (tmp_path / "lib").mkdir()
    lib = tmp_path / "lib" / "empty.yaml"
    lib.write_text("description: nothing yet\nsteps: []\n", encoding="utf-8")
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nsteps:\n  - include: lib/empty.yaml\n  - include: lib/empty.yaml\n"
                    "    prefix: b_\n", encoding="utf-8")
    res = labctl("validate", str(plan), str(lib))
    assert res.returncode == 4
    located = [line for line in res.stderr.splitlines() if line.endswith("has no steps there")]
    assert located == [f"{lib}:2:8: steps: is an empty list: the step library has no steps there"] * 2  # once per file checked


def test_the_plan_schema_refuses_an_empty_steps_list_too(labctl):
    import json

    import jsonschema

    schema = json.loads(labctl("schema", "plan").stdout)
    validator = jsonschema.Draft202012Validator(schema)
    assert not validator.is_valid({"name": "p", "steps": []})
    assert validator.is_valid({"name": "p", "steps": [{"id": "w", "check": "wait", "args": {"duration": "1 s"}}]})
