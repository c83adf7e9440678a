"""JUnit XML of one run: a testcase per step (and corner), failures with value vs limit."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from labctl.console import format_value


def junit_xml(result: Any, suite_name: str = "labctl") -> str:
    cases = [s for s in result.steps if s.check != "safe_state" or s.outcome.value != "PASS"]
    suite = ET.Element("testsuite", name=suite_name, tests=str(len(cases)),
                       failures=str(sum(s.outcome.value == "FAIL" for s in cases)),
                       errors=str(sum(s.outcome.value in ("ERROR", "ABORTED") for s in cases)),
                       skipped=str(sum(s.outcome.value == "SKIPPED" for s in cases)))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="run_id", value=result.run_id)
    for s in cases:
        corner = ", ".join(f"{k}={v}" for k, v in s.corner.items())
        case = ET.SubElement(suite, "testcase", classname=f"{suite_name}.{s.group}",
                             name=f"{s.step_id}[{corner}]" if corner else s.step_id)
        kind = {"FAIL": "failure", "ERROR": "error", "ABORTED": "error", "SKIPPED": "skipped"}.get(s.outcome.value)
        if kind:
            ET.SubElement(case, kind, message=s.message or s.outcome.value)
        lines = []
        for m in s.measurements:
            labels = " ".join(f"{k}={v}" for k, v in m.labels.items())
            limit = f" [{m.limits.text}]" if m.limits and m.limits.text else ""
            value = format_value(m.value)
            lines.append(f"{m.name}{f' ({labels})' if labels else ''} = {value} {m.unit}{limit} {m.verdict.value}")
        if lines:
            ET.SubElement(case, "system-out").text = "\n".join(lines)
    return ET.tostring(ET.ElementTree(suite).getroot(), encoding="unicode", xml_declaration=True)


def write_junit(result: Any, path: str | Path, suite_name: str | None = None) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(junit_xml(result, suite_name or "labctl"), encoding="utf-8")
    return p
