"""The HTML report as a file: self-contained, escaped, bounded for big batches."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard import load_spec
from agentguard.cli.main import EXIT_INPUT, EXIT_OK, EXIT_VIOLATION, main
from agentguard.report import batch
from agentguard.report.html import _json_island, compliance_html


def _items(path: Path, spec_path: Path) -> tuple[list[batch.CheckedTrace], object]:
    spec = load_spec(spec_path)
    return batch.score_records(batch.read_files([str(path)]), spec), spec


def test_page_fetches_nothing(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """No URL is fetched: no src/href to another resource, no @import, a CSP of 'none'."""
    out = tmp_path / "r.html"
    code = main(
        ["report", str(specs_dir / "refund.ltl"), str(refund_batch("pfe")), "--html", str(out)]
    )
    assert code == EXIT_VIOLATION
    page = out.read_text()
    assert not re.search(r"""\b(src|href)\s*=\s*["'](?!#)""", page)
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {"http://www.w3.org/2000/svg"}


def test_hostile_labels_cannot_break_out(tmp_path: Path, specs_dir: Path) -> None:
    """A tool name holding '</script><script>' is escaped in the HTML and the JSON island."""
    trace = tmp_path / "t.json"
    evil = "</script><script>alert(1)</script>"
    trace.write_text(json.dumps({"tool_calls": [{"tool_name": evil, "arguments": {"x": evil}}]}))
    out = tmp_path / "r.html"
    main(["report", str(specs_dir / "refund.ltl"), str(trace), "--html", str(out)])
    page = out.read_text()
    assert "alert(1)" in page  # present, as data
    assert page.count("<script") == 2  # the JSON island and the report's own script
    island = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S
    )
    assert island is not None
    data = json.loads(island.group(1))
    assert data["traces"][0]["steps"][0][0] == evil


def test_recorded_tool_errors_draw_pec_curves(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """With recorded tool errors the report draws PEC curves per --by group as inline SVG."""
    out = tmp_path / "r.html"
    main(
        [
            "report",
            str(specs_dir / "refund.ltl"),
            str(refund_batch("ppee")),
            "--by",
            "model",
            "--html",
            str(out),
        ]
    )
    page = out.read_text()
    svg = re.search(r"<svg class=\"pec-curves\".*?</svg>", page, re.S)
    assert svg is not None
    root = ET.fromstring(svg.group(0))
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f".//{ns}polyline")) == 2  # m-even, m-odd
    assert "Pass rate by model" in page and 'id="pec-table"' in page


def test_without_recorded_errors_the_report_says_why_there_is_no_curve(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """No recorded tool error: no flat curve, a note pointing at `agentguard pec --html`."""
    out = tmp_path / "r.html"
    assert (
        main(["report", str(specs_dir / "refund.ltl"), str(refund_batch("pp")), "--html", str(out)])
        == EXIT_OK
    )
    page = out.read_text()
    assert "<svg" not in page and "No trace recorded a tool error" in page


def test_unreadable_records_are_listed_and_exit_three(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """A broken line is listed in the report (exit 3); the other traces are still drawn."""
    runs = refund_batch("pf")
    runs.write_text(runs.read_text() + "{broken\n")
    out = tmp_path / "r.html"
    assert (
        main(["report", str(specs_dir / "refund.ltl"), str(runs), "--html", str(out)]) == EXIT_INPUT
    )
    page = out.read_text()
    assert "Unreadable records (1)" in page and f"{runs}:3" in page
    assert page.count('<details class="trace') == 2


def test_five_hundred_traces_stay_light(specs_dir: Path, refund_batch: Callable[..., Path]) -> None:
    """500 traces: one collapsed section each (only the first failing one open), bounded size."""
    items, spec = _items(refund_batch("pf" * 250), specs_dir / "refund.ltl")
    page = compliance_html(items, spec)  # type: ignore[arg-type]
    assert page.count('<details class="trace') == 500
    assert page.count(" open><summary>") == 1
    assert len(page) < 2_500_000


@pytest.mark.parametrize("n", [1, 3])
def test_small_reports_open_every_trace(
    specs_dir: Path, refund_batch: Callable[..., Path], n: int
) -> None:
    """Up to three traces, every section starts open."""
    items, spec = _items(refund_batch("p" * n), specs_dir / "refund.ltl")
    assert compliance_html(items, spec).count(" open><summary>") == n  # type: ignore[arg-type]


def test_report_exit_codes_follow_check(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """An invalid spec exits 2 and writes nothing; --fail-under decides exit 1 by the mean."""
    bad_spec = tmp_path / "bad.ltl"
    bad_spec.write_text("constraint a := G(b ->\n")
    out = tmp_path / "r.html"
    runs = refund_batch("ppppf")
    assert main(["report", str(bad_spec), str(runs), "--html", str(out)]) == 2
    assert not out.exists()
    spec = str(specs_dir / "refund.ltl")
    assert main(["report", spec, str(runs), "--html", str(out), "--fail-under", "0.8"]) == EXIT_OK
    assert main(["report", spec, str(runs), "--html", str(out)]) == EXIT_VIOLATION


def test_report_groups_by_label(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """--by label makes one group per trace label, shown in the group table."""
    out = tmp_path / "r.html"
    runs = refund_batch("pf")
    main(["report", str(specs_dir / "refund.ltl"), str(runs), "--by", "label", "--html", str(out)])
    page = out.read_text()
    assert "Pass rate by label" in page
    assert f'<td class="mono">{runs}:1</td>' in page and f'<td class="mono">{runs}:2</td>' in page


@given(st.recursive(st.text(), lambda c: st.lists(c, max_size=3), max_leaves=6))
def test_json_island_round_trips_and_never_closes_the_script(value: object) -> None:
    """Any data put in the page's JSON island reads back equal and holds no '<', '>' or '&'."""
    text = _json_island(value)
    assert not set(text) & set("<>&")
    assert json.loads(text) == value
