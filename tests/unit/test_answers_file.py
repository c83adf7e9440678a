"""``--answers FILE`` is read as written: YAML 1.1's ``yes``/``no``/``on`` are the words a
prompt offers, not booleans; a prompt answered twice or with a list is refused with where."""

from __future__ import annotations

import re

import pytest

from labctl.engine.context import PromptUnanswered
from labctl.errors import UsageError
from labctl.launch import load_answers


def test_answers_are_the_text_written(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("fan: yes\nlid: no\nlight: on\nvolts: 1.50\nnote: 'quoted'\nempty:\n")
    handler = load_answers(str(path))
    assert handler("fan#1", "fan spinning?", ("yes", "no")) == ("yes", "answers-file")
    assert handler("lid", "lid open?", ("yes", "no"))[0] == "no"
    assert handler("light", "", ())[0] == "on"
    assert handler("volts", "", ())[0] == "1.50"
    assert handler("note", "", ())[0] == "quoted"
    assert handler("empty", "", ())[0] == ""
    # an answer outside the prompt's choices is handed on as written: the step judges it, as
    # it judges a person's (docs/checks.md: a choice outside choices FAILs, ``n`` fails a confirm)
    other = tmp_path / "b.yaml"
    other.write_text("fan: maybe\nlid: n\n")
    assert load_answers(str(other))("fan", "", ("A", "B")) == ("maybe", "answers-file")
    assert load_answers(str(other))("lid", "", ("yes", "no")) == ("n", "answers-file")
    with pytest.raises(PromptUnanswered, match="no answer for prompt 'door'"):
        load_answers(str(other))("door", "", ("yes", "no"))


@pytest.mark.parametrize(("text", "message"), [
    ("fan: yes\nfan: no\n", "a.yaml:2:1: prompt fan is answered twice in this file"),
    ("fan: [yes, no]\n", "a.yaml:1:1: an answer is one value (text), not a list or a mapping"),
    ("- fan\n", "expected a mapping of prompt id -> answer"),
])
def test_a_prompt_answered_twice_or_with_a_list_is_refused_with_where(tmp_path, text, message):
    path = tmp_path / "a.yaml"
    path.write_text(text)
    with pytest.raises(UsageError, match=re.escape(message)):
        load_answers(str(path))
