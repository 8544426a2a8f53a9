"""score_dataset on a local Ray: the same reports as serial scoring, and the table."""

from __future__ import annotations

import builtins
import json
import random
from typing import Any

import pytest

from agentguard import parse_spec, verify_trace
from agentguard.errors import MissingExtraError
from agentguard.scale import summarize

SPEC = parse_spec(
    "spec shop\n"
    "constraint order := G(refund -> O lookup)\n"
    "constraint cap := G !refund(amount > 100)\n"
    "constraint once := forall o: G(refund(order = o) -> !(X F refund(order = o)))\n"
    "constraint done := Called(final_answer)"
)


def _records(count: int) -> list[dict[str, Any]]:
    rng = random.Random(1)
    out = []
    for _ in range(count):
        calls = []
        for _ in range(rng.randint(0, 7)):
            name = rng.choice(["lookup", "refund", "final_answer"])
            args: dict[str, Any] = {"order": rng.randint(0, 3)}
            if name == "refund":
                args["amount"] = rng.choice([10, 150])
            calls.append({"tool_name": name, "arguments": args, "tool_result": "ok"})
        out.append({"tool_calls": calls})
    return out


def test_json_text_rows_score_like_serial(ray_session: Any) -> None:
    """Traces kept as JSON text (one column) get exactly the serial reports, in order."""
    from agentguard.scale import score_dataset

    records = _records(60)
    ds = ray_session.data.from_items([{"trace": json.dumps(r)} for r in records])
    got = score_dataset(ds, SPEC, column="trace", batch_size=16)
    serial = [verify_trace(r, SPEC) for r in records]
    assert list(got.reports) == serial
    assert got.summary == summarize(serial)


def test_record_rows_and_spec_text(ray_session: Any) -> None:
    """Whole rows can be the trace records, and the spec can be given as text."""
    from agentguard.scale import score_dataset

    rows = [
        {"tool_calls": [{"tool_name": n, "arguments": {}} for n in names]}
        for names in (["lookup", "refund"], ["refund"], [])
    ]
    text = "constraint order := G(refund -> O lookup)"
    got = score_dataset(ray_session.data.from_items(rows), text)
    assert [r.score for r in got.reports] == [1.0, 0.0, 1.0]
    assert got.summary.constraints[0].passed == 2


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ray installed the call says to install agentguard[ray]."""
    from agentguard.scale import dataset

    real_import = builtins.__import__

    def no_ray(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "ray" or name.startswith("ray."):
            raise ImportError("No module named 'ray'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    monkeypatch.setattr(dataset.importlib, "import_module", lambda n: no_ray(n))
    with pytest.raises(MissingExtraError, match=r"agentguard\[ray\]"):
        dataset.score_dataset(object(), SPEC)
