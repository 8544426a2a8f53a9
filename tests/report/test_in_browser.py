"""The HTML reports in a real headless Chromium: the DOM after the scripts ran, and a
screenshot checked for size and content (see tests/report/browser.py for the setup)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path

from agentguard.cli.main import main
from agentguard.pec.cli import add_parser
from agentguard.pec.loaders import episode_to_json
from tests.pec.helpers import worked_example
from tests.report.browser import dump_dom, png_size_and_colours, screenshot


def test_compliance_report_renders_timelines(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """After the script ran: constraint columns, verdict cells, repair hints; a real picture."""
    page = tmp_path / "report.html"
    main(["report", str(specs_dir / "refund.ltl"), str(refund_batch("fp")), "--html", str(page)])
    dom = dump_dom(page, tmp_path / "profile")
    assert 'data-ready="1"' in dom  # the report's script ran to the end
    assert dom.count('<table class="timeline">') == 2  # both traces open and drawn
    for name in ("identity_first", "refund_only_known_orders", "tell_the_customer"):
        assert f'<th class="c" title="{name}">{name}</th>' in dom
    assert '<i class="v chg">✗</i>' in dom and '<i class="s chg">✓</i>' in dom
    assert "repair hint: call verify_identity successfully before calling issue_refund" in dom
    assert 'class="fail verdict-fail">FAIL</td>' in dom
    shot = screenshot(page, tmp_path / "profile", tmp_path / "report.png", 1280, 1800)
    width, height, colours = png_size_and_colours(shot)
    assert (width, height) == (1280, 1800)
    assert colours > 40, "the screenshot is (nearly) blank"


def test_five_hundred_traces_open_one(
    tmp_path: Path, specs_dir: Path, refund_batch: Callable[..., Path]
) -> None:
    """A 500-trace report loads; only the first failing trace is drawn until opened."""
    page = tmp_path / "big.html"
    runs = refund_batch("pf" * 250)
    main(["report", str(specs_dir / "refund.ltl"), str(runs), "--html", str(page), "--by", "model"])
    dom = dump_dom(page, tmp_path / "profile")
    assert 'data-ready="1"' in dom
    assert len(re.findall(r'<details class="trace (?:passing|failing)"', dom)) == 500
    assert dom.count('<table class="timeline">') == 1
    assert dom.count('data-rendered="1"') == 1
    assert "Pass rate by model" in dom


def test_pec_report_draws_curves(tmp_path: Path) -> None:
    """pec --html: inline SVG curves per group and the episode table, rendered in Chromium."""
    import json

    records = []
    for method in ("plan-cond", "react"):
        for s in worked_example():
            record = episode_to_json(s)
            record["labels"] = {"dataset": "bfcl", "method": method}
            records.append(json.dumps(record))
    episodes = tmp_path / "eps.jsonl"
    episodes.write_text("\n".join(records) + "\n")
    page = tmp_path / "pec.html"
    parser = argparse.ArgumentParser(prog="agentguard")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["pec", str(episodes), "--resamples", "200", "--html", str(page)])
    assert args.func(args) == 0
    dom = dump_dom(page, tmp_path / "profile")
    assert dom.count('<polyline class="curve"') == 2
    assert "plan-cond" in dom and "react" in dom and 'id="episodes"' in dom
    shot = screenshot(page, tmp_path / "profile", tmp_path / "pec.png", 1100, 900)
    width, height, colours = png_size_and_colours(shot)
    assert (width, height) == (1100, 900) and colours > 40


def test_dialogue_events_render_as_message_rows(tmp_path: Path, specs_dir: Path) -> None:
    """The tau2 airline run's messages are rows of their own between the calls."""
    page = tmp_path / "airline.html"
    traces = specs_dir / "traces" / "tau2_airline.fail.json"
    main(["report", str(specs_dir / "tau2_airline.ltl"), str(traces), "--html", str(page)])
    dom = dump_dom(page, tmp_path / "profile")
    assert 'data-ready="1"' in dom
    assert 'class="step msg msg-user' in dom and 'class="step msg msg-assistant' in dom
    assert ">user says</td>" in dom and "Hmm, does that include travel insurance?" in dom
    assert '<td class="tool">book_reservation</td>' in dom


def test_one_numbering_for_calls_between_messages(tmp_path: Path) -> None:
    """Between user messages, the call that violates is "call #4" in the violation box, in
    the constraint's detail and in the timeline's # column; the header counts 4 calls."""
    import json

    records: list[dict[str, object]] = []
    for name in ("a", "a", "a", "d"):
        records.append({"tool_name": "user_message", "arguments": {"text": "go on"}})
        records.append({"tool_name": name, "arguments": {}, "tool_result": "ok"})
    trace = tmp_path / "run.json"
    trace.write_text(json.dumps(records), encoding="utf-8")
    spec = tmp_path / "spec.ltl"
    spec.write_text("constraint never_d := G(!d)\n", encoding="utf-8")
    page = tmp_path / "report.html"
    main(["report", str(spec), str(trace), "--html", str(page)])
    dom = dump_dom(page, tmp_path / "profile")
    assert 'data-ready="1"' in dom
    assert "violated by call #4 d" in dom
    assert 'call #4 ("d")' in dom
    assert "4 calls, 4 messages" in dom
    numbers = re.findall(r'<td class="pos">(\d*)</td>', dom)
    assert numbers == ["", "1", "", "2", "", "3", "", "4", ""]  # the end row has none
