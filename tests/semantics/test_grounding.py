"""Trace grounding κ_ground (Section 4.4, Appendix H.3, Table 21, H.4)."""

from __future__ import annotations

import json

from agentguard.language import parse_spec
from agentguard.semantics.entities import BLOCKLIST, Entity, extract_entities
from agentguard.semantics.grounding import entities_extractor, grounding, seen_entities
from agentguard.semantics.registry import Registry, register_grounding
from agentguard.trace.model import Trace

API_PY = '''"""requests.api"""
from . import sessions


def request(method, url, **kwargs):
    with sessions.Session() as session:
        return session.request(method=method, url=url, **kwargs)


def get(url, params=None, **kwargs):
    return request("get", url, params=params, **kwargs)
'''


def listing(path: str, entries: list[str]) -> dict[str, object]:
    return {
        "tool_name": "list_directory",
        "arguments": {"path": path},
        "tool_result": json.dumps({"entries": entries}),
    }


def read(path: str, content: str) -> dict[str, object]:
    return {
        "tool_name": "read_file",
        "arguments": {"path": path},
        "tool_result": json.dumps({"path": path, "content": content}),
    }


def answer(text: str) -> dict[str, object]:
    return {"tool_name": "final_answer", "arguments": {"answer": text}, "tool_result": text}


def trace(*records: dict[str, object]) -> Trace:
    return Trace.from_records(list(records))


# -- entity extraction ---------------------------------------------------------------


def test_extracts_the_three_entity_classes() -> None:
    """Paths with source extensions, Class.method( / func( signatures, Camel/snake identifiers."""
    ents = extract_entities(
        "See Session.request( in src/requests/sessions.py and merge_setting() near HTTPAdapter."
    )
    assert Entity("file_path", "src/requests/sessions.py") in ents
    assert Entity("function_signature", "Session.request") in ents
    assert Entity("function_signature", "merge_setting") in ents
    assert Entity("identifier", "HTTPAdapter") in ents
    assert Entity("identifier", "merge_setting") in ents


def test_blocklist_and_short_tokens_are_dropped() -> None:
    """Keywords, stdlib modules, common exceptions and tokens under 3 chars are not entities."""
    assert extract_entities("import os, json and re; return ValueError if x") == []
    assert 50 <= len(BLOCKLIST) <= 70


def test_seen_set_uses_ast_for_python() -> None:
    """Defined functions, classes, methods and path words of read files enter the seen set."""
    source = "class Foo:\n    def bar(self):\n        pass\n\ndef baz():\n    pass\n"
    seen = seen_entities(trace(read("pkg/mod.py", source)))
    assert "pkg/mod.py" in seen.paths
    assert {"foo.bar", "baz"} <= seen.signatures
    assert {"foo", "bar", "baz", "pkg", "mod"} <= seen.identifiers


def test_seen_set_regex_fallback_for_chunks() -> None:
    """A chunk that does not parse still yields its def / class names."""
    seen = seen_entities(trace(read("a.py", "    def inner(self):\n  )( broken\nclass Kept:")))
    assert {"inner", "kept"} <= seen.identifiers


def test_matching_rules() -> None:
    """Paths match exactly; identifiers by case-insensitive prefix; listings are no evidence."""
    t = trace(listing("", ["a.py", "b.py"]), read("a.py", "def charge_point_start():\n    pass\n"))
    assert grounding(t, "a.py").grounded
    assert not grounding(t, "./b.py").grounded
    assert grounding(t, "CHARGE_point").grounded


# -- Table 21, row by row ------------------------------------------------------------


def test_table21_list_directory_only_is_false() -> None:
    """list_directory only, no read_file -> False."""
    v = grounding(trace(listing("", ["api.py"]), answer("api.py")))
    assert not v.grounded
    assert "no read_file" in v.reason


def test_table21_empty_answer_is_false() -> None:
    """read_file called but the final answer is empty -> False."""
    assert not grounding(trace(read("api.py", API_PY), answer("   "))).grounded


def test_table21_only_blocklisted_names_is_true() -> None:
    """An answer with only builtin / blocklist names -> True (vacuous)."""
    v = grounding(
        trace(read("api.py", API_PY), answer("I don't know - not found in the source I read."))
    )
    blocked = grounding(trace(read("api.py", API_PY), answer("os json re return")))
    assert blocked.grounded
    assert blocked.entities == ()
    assert v.grounded  # refusal: the known vacuous-pass limitation of H.3


def test_table21_path_seen_only_in_listing_is_false() -> None:
    """Citing a path visible in list_directory but never read -> False."""
    t = trace(
        listing("src", ["api.py", "models.py"]), read("src/api.py", API_PY), answer("src/models.py")
    )
    v = grounding(t)
    assert not v.grounded
    assert Entity("file_path", "src/models.py") in v.ungrounded


def test_table21_symbol_in_no_chunk_is_false() -> None:
    """Many unrelated chunks read, then a symbol present in none -> False (per-entity)."""
    t = trace(
        *(read(f"pkg/m{k}.py", f"def helper_{k}():\n    pass\n") for k in range(5)),
        answer("PreparedRequest"),
    )
    v = grounding(t)
    assert not v.grounded
    assert [e.text for e in v.ungrounded] == ["PreparedRequest"]


# -- H.4 worked examples -------------------------------------------------------------


def test_h4_example_a_correct_grounded() -> None:
    """Example A (requests): 4/4 answer entities grounded after reading api.py."""
    t = trace(
        listing("", ["src"]),
        listing("src", ["requests"]),
        listing("src/requests", ["api.py"]),
        listing("src/requests", ["api.py"]),
        read("src/requests/api.py", API_PY),
        answer("src/requests/api.py"),
    )
    v = grounding(t)
    assert v.grounded
    assert v.reason == "4/4 answer entities grounded"


def test_h4_example_b_no_read_file() -> None:
    """Example B (matplotlib): three listings then an answer from memory -> False."""
    t = trace(
        listing("", ["lib", "ci"]),
        listing("lib", ["matplotlib"]),
        listing("lib/matplotlib", ["__init__.py"]),
        answer("lib/matplotlib/__init__.py"),
    )
    assert not grounding(t).grounded


def test_h4_example_c_explored_wrong_location() -> None:
    """Example C (ocpp): many reads, but a verbose answer names unread things -> False."""
    base = "class ChargePoint:\n    def start(self):\n        pass\n"
    t = trace(
        listing("", ["ocpp", "examples"]),
        listing("ocpp", ["charge_point.py", "v16"]),
        *(read("ocpp/charge_point.py", base) for _ in range(5)),
        read("ocpp/v16/__init__.py", "from ocpp.v16.charge_point import ChargePoint\n"),
        read("ocpp/v201/__init__.py", "from ocpp.v201.charge_point import ChargePoint\n"),
        read("ocpp/v21/__init__.py", "from ocpp.v21.charge_point import ChargePoint\n"),
        answer(
            "The class ChargePoint is primarily defined in the file ocpp/charge_point.py. "
            "This is the base class containing all the core OCPP functionality. "
            "Version-specific subclasses are found in ocpp/v16/__init__.py, "
            "ocpp/v201/__init__.py, and ocpp/v21/__init__.py. The user-facing example "
            "lives in examples/v16/central_system.py."
        ),
    )
    v = grounding(t)
    assert not v.grounded
    assert 0 < v.grounded_count < len(v.entities)
    assert Entity("file_path", "examples/v16/central_system.py") in v.ungrounded
    grounded_paths = {e.text for e in v.entities if e.kind == "file_path"} - {
        e.text for e in v.ungrounded
    }
    assert grounded_paths == {
        "ocpp/charge_point.py",
        "ocpp/v16/__init__.py",
        "ocpp/v201/__init__.py",
        "ocpp/v21/__init__.py",
    }


# -- registry hooks ----------------------------------------------------------------


def test_register_grounding_makes_spec_names_resolve() -> None:
    """After register_grounding, Predicate(grounded) and entities(...) resolve in a spec."""
    registry = Registry(builtins=False)
    assert "grounded" not in registry.context_predicates
    register_grounding(registry)
    spec = parse_spec(
        "spec g\ntool read_file(path: str)\ntool list_directory(path: str)\n"
        "constraint kappa_ground layer L1 weight 1 := Predicate(grounded)\n"
        "constraint no_ungrounded := forall e in ungrounded(final_answer.answer): false\n",
        registry=registry,
    )
    assert [c.name for c in spec.constraints] == ["kappa_ground", "no_ungrounded"]
    assert "grounded" in registry.context_predicates
    assert {"entities", "ungrounded"} <= set(registry.extractors)


def test_entities_extractor_reads_answer_path() -> None:
    """entities(final_answer.answer) returns the answer's entity strings."""
    t = trace(read("api.py", API_PY), answer("api.py defines request("))
    assert entities_extractor(t, "final_answer", ("answer",)) == ["api.py", "request", "api"]
