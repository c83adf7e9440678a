"""The --answers file is input from a colleague or a rig too: bounded like plans."""

from __future__ import annotations

from tests.conftest import run_labctl

LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
    f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n" for i in range(8))


def test_a_billion_laughs_answers_file_is_refused_before_anything_runs(tmp_path):
    answers = tmp_path / "answers.yaml"
    answers.write_text(LAUGHS)
    res = run_labctl("run", "smoke.yaml", "--answers", str(answers), "--db", str(tmp_path / "r.db"), timeout=60)
    assert res.returncode == 4, res.stdout + res.stderr
    assert f"{answers}:" in res.stderr and "too many values" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_binary_answers_file_is_a_clean_error(tmp_path):
    answers = tmp_path / "answers.yaml"
    answers.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    res = run_labctl("run", "smoke.yaml", "--answers", str(answers), "--db", str(tmp_path / "r.db"), timeout=60)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "not a text file" in res.stderr and "Traceback" not in res.stderr
