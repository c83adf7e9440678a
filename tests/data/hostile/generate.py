"""Write the hostile-input corpus: malformed and hostile plans and fixtures, each with where
labctl must report it and what it must say (``expected.json``).

Run from the repository root after changing a case: ``python tests/data/hostile/generate.py``.
The files are committed; tests/reliability/test_hostile_inputs.py checks each one. A case
names its expected position by a piece of its own text (``at=``: the first character of
that piece's ``nth`` occurrence), so the expectations follow the text when it changes.
Files too large to commit (a 50 MB plan) are made by the tests themselves.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from labctl.plan.bounds import MAX_EXPANDED_STEPS, MAX_NODES

HERE = Path(__file__).resolve().parent
HEAD = "name: hostile\nrequires: [psu, daq, dut, chamber]\n"
WAIT = "  - id: w\n    check: wait\n    args: {duration: 1 s}\n"


@dataclass
class Case:
    name: str
    content: str | bytes
    message: str
    at: str | None = None  # the expected position: first character of this text …
    nth: int = 0  # … at its nth occurrence
    offset: int = 0  # … plus this many characters
    line: int | None = None  # or given outright (binary files)
    column: int | None = None
    kind: str = "plan"
    in_file: str | None = None  # the error is reported in this file (an included library)


CASES: list[Case] = []


def case(name: str, content: str | bytes, message: str, at: str | None = None, **kw: object) -> None:
    CASES.append(Case(name, content, message, at, **kw))  # type: ignore[arg-type]


def plan(body: str, steps: str = WAIT) -> str:
    return HEAD + body + "steps:\n" + steps


def step(extra: str, check: str = "wait", args: str = "{duration: 1 s}") -> str:
    return f"  - id: s\n    check: {check}\n    args: {args}\n{extra}"


# -- aliases: billion laughs, alias bombs, loops --------------------------------------------
def laughs(levels: int, width: int, merge: bool = False) -> str:
    lines = ['l0: &l0 ["lol"' + ', "lol"' * (width - 1) + "]"]
    for i in range(1, levels):
        if merge:
            items = ", ".join(f"k{j}: *l{i - 1}" for j in range(width))
            lines.append(f"l{i}: &l{i} {{{items}}}")
        else:
            lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "x_bomb:\n" + "\n".join("  " + ln for ln in lines) + "\n"


def crossing_line(levels: int, width: int, merge: bool, first_line: int) -> int | None:
    """The line of the bomb's level whose aliases take the expanded total past MAX_NODES."""
    size, total = 1 + width, 60  # level 0; the plan's own few values
    for lvl in range(levels):
        if lvl:
            size = 1 + width * (size + (1 if merge else 0))
        total += size
        if total > MAX_NODES:
            return first_line + lvl
    return None


BOMB_LINE = HEAD.count("\n") + 2  # the line of l0
for levels in (5, 6, 7, 8, 9):
    for width in (9, 10):
        line = crossing_line(levels, width, False, BOMB_LINE)
        if line is None:
            continue  # a small bomb is just a big plan
        case(f"laughs-{levels}x{width}", plan(laughs(levels, width)), "too many values once aliases are expanded",
             line=line)
for levels in (6, 8):
    case(f"laughs-map-{levels}", plan(laughs(levels, 10, merge=True)), "too many values once aliases are expanded",
         line=crossing_line(levels, 10, True, BOMB_LINE))
# the use of *m4 (in m5's merge list) at which the expanded total passes MAX_NODES, counted for
# the limit as it is: recount when MAX_NODES changes
MERGE_BOMB_CROSSING = {400_000: 6, 100_000: 0}[MAX_NODES]
case("merge-bomb", plan("x_m:\n" + "".join(
    f"  m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 10) + f"], k{i}: 1}}\n" if i else "  m0: &m0 {a: 1, b: 2}\n"
    for i in range(8))), "too many values once aliases are expanded", at="*m4", nth=MERGE_BOMB_CROSSING)
for n in (1001, 5000):
    case(f"alias-count-{n}", plan("x_a: &a 1\nx_b: [" + ", ".join(["*a"] * n) + "]\n"),
         "too many aliases", at="*a", nth=1000)
case("alias-loop-seq", plan("x_loop: &a [1, *a]\n"), "alias loop", at="*a")
case("alias-loop-map", plan("x_loop: &a {k: *a}\n"), "alias loop", at="*a")
case("alias-loop-steps", HEAD + "steps: &s\n  - *s\n", "alias loop", at="*s")
case("alias-loop-nested", plan("x_loop: &a {k: [1, {j: [*a]}]}\n"), "alias loop", at="*a")
case("alias-loop-merge", plan("x_loop: &a {<<: *a}\n"), "alias loop", at="*a")
case("alias-undefined", plan("x: *nowhere\n"), "bad YAML: found undefined alias", at="*nowhere")
case("alias-deep", plan("x_d: &d " + "[" * 40 + "]" * 40 + "\nx_e: " + "[" * 30 + "*d" + "]" * 30 + "\n"),
     "nested too deeply", at="*d")

# -- nesting ---------------------------------------------------------------------------------
for depth in (65, 100, 1000, 10_000):
    case(f"deep-flow-seq-{depth}", plan("x: " + "[" * depth + "]" * depth + "\n"), "nested too deeply",
         at="x: ", offset=3 + 63)
    case(f"deep-flow-map-{depth}", plan("x: " + "{a: " * depth + "1" + "}" * depth + "\n"),
         "nested too deeply", at="x: ", offset=3 + 63 * 4)
for depth in (70, 300):
    block = "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "v: 1\n"
    case(f"deep-block-map-{depth}", plan("x:\n" + "".join("  " + ln + "\n" for ln in block.splitlines())),
         "nested too deeply", at="k63:")
    case(f"deep-block-seq-{depth}", plan("x:\n" + "".join("  " * (i + 1) + "-\n" for i in range(depth))
                                         + "  " * (depth + 1) + "1\n"), "nested too deeply",
         at="\n" + "  " * 64 + "-", offset=1 + 128)
case("deep-steps-args", plan("", step("", args="{a: " * 80 + "1" + "}" * 80)), "nested too deeply",
     at="args: ", offset=6 + 61 * 4)

# -- numbers ---------------------------------------------------------------------------------
for digits in (101, 1000, 4301, 100_000):
    case(f"bigint-version-{digits}", HEAD.replace("name: hostile", "name: hostile\nversion: " + "9" * digits)
         + "steps:\n" + WAIT, "number too long", at="999")
    case(f"bigint-param-{digits}", plan("parameters:\n  n: " + "1" * digits + "\n"), "number too long", at="111")
    case(f"bigint-expr-{digits}", plan("parameters:\n  n: \"${" + "7" * digits + "}\"\n"),
         "number too long", at="777")
for digits in (101, 5000):
    case(f"bigfloat-{digits}", plan("parameters:\n  f: " + "3" * digits + ".5\n"), "number too long", at="333")
    case(f"bigint-hex-{digits}", plan("parameters:\n  h: 0x" + "f" * digits + "1" * 101 + "\n"),
         "number too long", at="0x")
    case(f"bigint-quantity-{digits}", plan("", step(f"    limits: {{max: {'5' * digits} V}}\n", "power.rails",
                                                    "{rails: [VDD_CORE]}")),
         "beyond any bench" if digits < 200 else "is not a quantity", at="555")
for text in (".inf", "-.inf", ".nan", ".NaN", "1.0e999", "-1.5e+400"):
    case(f"nonfinite-yaml-{text.strip('.-+').lower()}{'-neg' if text.startswith('-') else ''}",
         plan(f"parameters:\n  v: {text}\n"), "is not a finite number", at=text)

# -- tags ------------------------------------------------------------------------------------
TAGS = ["!!python/object/apply:os.system", "!!python/object:os.Popen", "!!python/name:os.system",
        "!!python/module:os", "!!python/object/new:subprocess.Popen", "!!binary", "!!set", "!!omap",
        "!custom", "!<tag:example.com,2000:app/foo>"]
for i, tag in enumerate(TAGS):
    case(f"tag-{i}-scalar", plan(f"parameters:\n  v: {tag} echo\n"), "YAML tag", at=tag)
    case(f"tag-{i}-seq", plan(f"x: {tag} [echo, hi]\n"), "YAML tag", at=tag)
    case(f"tag-{i}-map", plan(f"x: {tag}\n  args: [echo hi]\n"), "YAML tag", at=tag)
case("tag-on-steps", HEAD + "steps: !!python/object/apply:os.system\n  - echo hi\n", "not allowed on a list",
     at="!!python")
case("tag-str-on-map", plan("x: !!str {a: 1}\n"), "not allowed on a mapping", at="!!str")
case("tag-map-on-seq", plan("x: !!map [1]\n"), "not allowed on a list", at="!!map")
case("tag-on-key", plan("parameters:\n  !!python/name:os.system k: 1\n"), "YAML tag", at="!!python")
case("tag-timestamp-bad", plan("x: !!timestamp 2025-13-45\n"), "bad value", at="!!timestamp")

# -- binary and encodings ----------------------------------------------------------------------
rng = random.Random(20261130)
for i in range(12):
    data = bytes(rng.randrange(256) for _ in range(rng.choice((64, 512, 4096))))
    data = b"\xff" + data  # never valid UTF-8 at byte 0
    case(f"binary-{i:02d}", data, "not a text file", line=1, column=1)
case("binary-after-text", b"name: x\nsteps: []\n# \xc3\x28 broken\n", "not a text file", line=3, column=3)
case("utf16", "name: x\nsteps: []\n".encode("utf-16"), "not a text file", line=1, column=1)
case("latin1", "name: café\nsteps: []\n".encode("latin-1"), "not a text file", line=1, column=10)
for i, ch in enumerate(("\x00", "\x01", "\x07", "\x1b", "\x7f", "\ufffe")):
    case(f"control-{i}", f"name: x\nsteps: []\nnote: a{ch}b\n", "control character", line=3, column=8)
case("elf-header", b"\x7fELF\x02\x01\x01\x00" + bytes(120), "control character", line=1, column=1)
case("gzip", b"\x1f\x8b\x08\x00" + bytes(60), "not a text file", line=1, column=2)

# -- expressions -------------------------------------------------------------------------------
# the 33rd level of nesting is refused; past 256 tokens the length is refused first
for n in (33, 100, 5000):
    case(f"parens-{n}", plan("", step(f"    when: \"{'(' * n}1{')' * n}\"\n")),
         "nested too deeply" if n < 256 else "expression too long", at="((", offset=32 if n < 256 else 256)
    case(f"nots-{n}", plan("", step(f"    when: \"{'not ' * n}true\"\n")),
         "nested too deeply" if n < 256 else "expression too long", at="not", offset=4 * (32 if n < 256 else 256))
    case(f"minus-{n}", plan("parameters:\n  v: \"${" + "-" * n + "1 V}\"\n"),
         "nested too deeply" if n < 256 else "expression too long", at="---", offset=32 if n < 256 else 256)
for n in (20_000,):
    case(f"nots-{n}", plan("", step(f"    when: \"{'not ' * n}true\"\n")), "expression too long", at="not",
         offset=4 * 256)
case("plus-chain-300", plan("parameters:\n  v: \"${" + " + ".join(["1 V"] * 300) + "}\"\n"),
     "expression too long", at="1 V", offset=128 * 6)
case("expr-inf-mul", plan("", step("    limits: {max: \"${1 V * 1e308}\"}\n", "power.rails", "{rails: [VDD_CORE]}")),
     "beyond any bench", at="* 1e308")
case("expr-inf-1e308", plan("", step("    limits: {max: \"${1e308 V * 1e308}\"}\n", "power.rails", "{rails: [VDD_CORE]}")),
     "beyond any bench", at="1e308 V")
case("expr-1e999", plan("parameters:\n  v: \"${1e999}\"\n"), "is not a finite number", at="1e999")
case("expr-overflow", plan("parameters:\n  v: \"${1e300 * 1e300}\"\n"), "is not a finite number", at="*")
case("expr-int-huge", plan("parameters:\n  v: \"${" + " * ".join(["9" * 90] * 5) + "}\"\n"),
     "is not a finite number", at="*")
case("expr-div0", plan("parameters:\n  v: \"${1 V / 0}\"\n"), "division by zero", at="/")
case("expr-unclosed", plan("parameters:\n  v: \"${1 V\"\n"), "unclosed", at="${")
case("expr-bad-char", plan("parameters:\n  v: \"${1 V ^ 2}\"\n"), "unexpected character", at="^")
case("expr-undefined-word", plan("parameters:\n  mode: quick\n", step("    when: mode == full\n")),
     "undefined parameter 'full'", at="full")

# -- corners -------------------------------------------------------------------------------------
# each just past MAX_EXPANDED_STEPS (100,000) but the last three, far past it
for axes, values in ((2, 317), (3, 47), (4, 18), (5, 11), (1, MAX_EXPANDED_STEPS + 1), (6, 10), (9, 10), (12, 10)):
    body = "corners:\n" + "".join(f"  a{i}: [{', '.join(str(j) for j in range(values))}]\n" for i in range(axes))
    case(f"corners-{axes}x{values}", plan(body), "corners:", at="corners")
case("corners-steps", plan("corners:\n  a: [" + ", ".join(str(i) for i in range(MAX_EXPANDED_STEPS // 5)) + "]\n",
                           "".join(f"  - {{id: w{i}, check: wait, args: {{duration: 1 s}}}}\n" for i in range(6))),
     "steps to run", at="corners")

# -- impossible values -----------------------------------------------------------------------------
LIMIT = "    limits: {{max: {v}}}\n"
for i, v in enumerate(("1e999 V", "-1e999 V", "2 GV", "1e7 V", "1e40 mV", "1e999 mV")):
    case(f"limit-{i}", plan("", step(LIMIT.format(v=v), "power.rails", "{rails: [VDD_CORE]}")),
         "not a finite number" if "999" in v else "beyond any bench", at=v)
for i, v in enumerate(("1e999 s", "1e10 s", "87600 h", "10 year", "5000 h", "1e300 ms")):
    case(f"timeout-{i}", plan("", step(f"    timeout: {v}\n")),
         "not a finite number" if "999" in v else "beyond any bench", at=v)
    case(f"wait-{i}", plan("", step("", args=f"{{duration: {v}}}")),
         "not a finite number" if "999" in v else "beyond any bench", at=v)
for i, v in enumerate(("10 year", "1e999 s", "100000 h")):
    case(f"soak-hold-{i}", plan("", step("", "thermal.soak", f"{{setpoint: 25 degC, hold: {v}}}")),
         "not a finite number" if "999" in v else "beyond any bench", at=v)
for i, v in enumerate(("-300 degC", "5000 degC", "1e999 degC", "-500 K")):
    case(f"temperature-{i}", plan("", step("", "thermal.soak", f"{{setpoint: {v}, hold: 1 min}}")),
         "not a finite number" if "999" in v else "outside", at=v)
for i, v in enumerate(("1e7 A", "1e12 W", "1e20 Hz")):
    case(f"quantity-{i}", plan(f"parameters:\n  q: {v}\n"), "beyond any bench", at=v)
case("quantity-long", plan("", step("    limits: {max: \"1" + " " * 5000 + "V x\"}\n", "power.rails",
                                     "{rails: [VDD_CORE]}")), "is not a quantity", at="\"1")

# -- includes -----------------------------------------------------------------------------------------
for i, target in enumerate(("/etc/passwd", "/etc/shadow", "../../../../../../../../etc/passwd",
                            "../../../../../../../../etc/shadow", "/proc/self/environ", "/dev/zero",
                            "../../../../pyproject.toml", "lib/../../../../../etc/hosts", "~/.ssh/id_rsa.yaml",
                            "/root/.bash_history")):
    case(f"include-escape-{i}", plan("", f"  - include: {target}\n"),
         "leads outside the plan's folder" if not target.startswith("~") else "included file not found",
         at=target)
case("include-not-yaml", plan("", "  - include: lib/notes.txt\n"), "is not a YAML file", at="lib/notes.txt")
case("include-not-library", plan("", "  - include: lib/not-a-library.yaml\n"), "is not a step library",
     at="lib/not-a-library.yaml")
case("include-list", plan("", "  - include: lib/a-list.yaml\n"), "is not a step library", at="lib/a-list.yaml")
case("include-hostile-lib", plan("", "  - include: lib/bomb.yaml\n"), "too many values once aliases are expanded",
     line=crossing_line(9, 10, False, 2), in_file="lib/bomb.yaml")
case("include-missing", plan("", "  - include: lib/nowhere.yaml\n"), "included file not found", at="lib/nowhere.yaml")
# each ibomb level includes the next twice (2^24 steps); ebomb the same with no steps at all:
# the 201st include (depth first) is refused, in the level-22 file's second include line
case("include-bomb-deep", plan("", "  - include: lib/ibomb-0.yaml\n"), "more than 200 includes",
     line=3, column=14, in_file="lib/ibomb-22.yaml")
case("include-bomb-empty", plan("", "  - include: lib/ebomb-0.yaml\n"), "more than 200 includes",
     line=3, column=14, in_file="lib/ebomb-22.yaml")
# many-steps.yaml holds 2,600 steps: the include that crosses MAX_EXPANDED_STEPS is refused at
# the step that crosses it, in that file
_CROSSING_INCLUDE = MAX_EXPANDED_STEPS // 2600 + 1
case("include-bomb-steps", plan("", "".join(f"  - {{include: lib/many-steps.yaml, prefix: p{i}_}}\n"
                                            for i in range(_CROSSING_INCLUDE + 1))),
     "steps once includes are spliced in", line=1 + MAX_EXPANDED_STEPS + 1 - (_CROSSING_INCLUDE - 1) * 2600,
     column=5, in_file="lib/many-steps.yaml")
case("include-cycle", plan("", "  - include: lib/cycle.yaml\n"), "include cycle", line=2, column=14,
     in_file="lib/cycle.yaml")

# -- not plans at all --------------------------------------------------------------------------------
case("shadow-like", "root:*:19000:0:99999:7:::\ndaemon: x\nbin: x\n", "this is not a test plan", line=1, column=1)
case("a-list", "- 1\n- 2\n", "a plan must be a mapping", line=1, column=1)
case("a-scalar", "hello\n", "a plan must be a mapping", line=1, column=1)
case("multi-document", "name: a\nsteps: []\n---\nname: b\n", "bad YAML: but found another document", at="---")
case("tabs", "name: x\nsteps:\n\t- id: a\n", "bad YAML", line=3, column=1)
case("unclosed-flow", "name: x\nsteps: [\n", "bad YAML", line=3, column=1)

# -- fixtures --------------------------------------------------------------------------------------------
FX = ("station: hostile-bench\nroles:\n  psu:\n    driver: keysight-e36312a\n"
      "    resource: TCPIP0::127.0.0.1::5025::SOCKET\n    timeout: {t}\n")
for i, t in enumerate(("1e999 s", "2 h", "87600 h", "1e10 s", "1e999", "-1e999 s")):
    case(f"fx-timeout-{i}", FX.format(t=t),
         "not a finite number" if "999" in t else "longer than 60 min" if t == "2 h" else "beyond any bench",
         at=t, kind="fixture")
SIM = "station: hostile-bench\nsim:\n  time_scale: {v}\n"
for i, v in enumerate(("1e308", "1.0e+308", "1e9", "100000", "1e-9", "0.0000001")):
    case(f"fx-time-scale-{i}", SIM.format(v=v), "sim.time_scale", at=v, kind="fixture")
for i, v in enumerate((".inf", ".nan", "-.inf")):
    case(f"fx-time-scale-nonfinite-{i}", SIM.format(v=v), "is not a finite number", at=v, kind="fixture")
case("fx-laughs", "station: x\n" + laughs(8, 10), "too many values once aliases are expanded",
     line=crossing_line(8, 10, False, 3), kind="fixture")
case("fx-alias-loop", "station: x\nroles: &r {psu: *r}\n", "alias loop", at="*r", kind="fixture")
case("fx-deep", "station: x\noptions: " + "[" * 10_000 + "]" * 10_000 + "\n", "nested too deeply",
     at="[", nth=63, kind="fixture")
case("fx-bigint", "station: x\nsim:\n  seed: " + "9" * 100_000 + "\n", "number too long", at="999", kind="fixture")
case("fx-tag-map", "station: x\nroles: !!python/object/apply:os.system\n  args: [id]\n", "YAML tag",
     at="!!python", kind="fixture")
case("fx-tag-seq", "station: x\nslots: !!python/object/apply:os.system [id]\n", "YAML tag", at="!!python",
     kind="fixture")
case("fx-tag-scalar", "station: !!python/name:os.system x\n", "YAML tag", at="!!python", kind="fixture")
case("fx-binary", b"station: x\n\xfe\xfe\xfe", "not a text file", line=2, column=1, kind="fixture")
case("fx-control", "station: x\u0000\n", "control character", line=1, column=11, kind="fixture")


def _position(text: str, at: str, nth: int, offset: int = 0) -> tuple[int, int]:
    index = -1
    for _ in range(nth + 1):
        index = text.index(at, index + 1)
    index += offset
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def write() -> list[dict[str, object]]:
    out = []
    for old in [*HERE.glob("*.yaml"), *HERE.glob("lib/*.yaml")]:
        old.unlink()
    for c in CASES:
        prefix = "" if c.kind == "plan" or c.name.startswith("fx-") else "fx-"
        path = HERE / f"{prefix}{c.name}.yaml"
        if isinstance(c.content, bytes):
            path.write_bytes(c.content)
        else:
            path.write_text(c.content, encoding="utf-8", newline="\n")
        line, column = c.line, c.column
        if c.at is not None and isinstance(c.content, str):
            line, column = _position(c.content, c.at, c.nth, c.offset)
        out.append({"file": path.name, "kind": c.kind, "error_file": c.in_file or path.name,
                    "line": line, "column": column, "message": c.message})
    lib = HERE / "lib"
    lib.mkdir(exist_ok=True)
    (lib / "notes.txt").write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    (lib / "not-a-library.yaml").write_text("root: x:0:0\nsecret_key: hunter2\n", encoding="utf-8")
    (lib / "a-list.yaml").write_text("- hunter2\n- swordfish\n", encoding="utf-8")
    (lib / "bomb.yaml").write_text(laughs(9, 10) + "steps: []\n", encoding="utf-8")
    for i in range(24):  # each level includes the next twice: 2^24 steps, 2^24 file reads
        nxt = f"  - include: ibomb-{i + 1}.yaml\n" if i < 23 else "  - {id: w, check: wait, args: {duration: 1 s}}\n"
        (lib / f"ibomb-{i}.yaml").write_text("steps:\n" + nxt * 2, encoding="utf-8")
        leaf = f"  - include: ebomb-{i + 1}.yaml\n" if i < 23 else ""
        (lib / f"ebomb-{i}.yaml").write_text("steps:\n" + leaf * 2 + ("" if leaf else "  []\n"), encoding="utf-8")
    (lib / "many-steps.yaml").write_text("steps:\n" + "".join(
        f"  - {{id: w{i}, check: wait, args: {{duration: 1 s}}}}\n" for i in range(2600)), encoding="utf-8")
    (lib / "cycle.yaml").write_text("steps:\n  - include: cycle.yaml\n", encoding="utf-8")
    (HERE / "expected.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    written = write()
    print(f"{len(written)} hostile files in {HERE}")
