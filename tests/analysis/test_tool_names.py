"""`unknown-tool` and `tool-mismatch`: the misspelt tool that would never fire is flagged,
with a did-you-mean against the tools lint can see."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.analysis import lint_spec
from agentguard.analysis.tool_names import edit_distance, near_miss
from agentguard.errors import SpecSemanticError
from agentguard.language import parse_spec

TWO = """constraint listed_first := G(read_file -> O list_directory)
constraint listed := O list_dirctory
"""


def kinds(text: str, tools: Any = None) -> list[tuple[str, int, str]]:
    found = lint_spec(parse_spec(text, source="s.ltl"), tools=tools)
    return [
        (w.kind, w.line, w.message) for w in found if w.kind in ("unknown-tool", "tool-mismatch")
    ]


class TestWithoutAToolList:
    def test_a_misspelt_tool_used_once_is_flagged_with_the_near_name(self) -> None:
        """`O list_dirctory` beside `list_directory` in another constraint: a warning at
        the typo's line naming both (it linted clean and never fired)."""
        ((kind, line, message),) = kinds(TWO)
        assert (kind, line) == ("unknown-tool", 2)
        assert "'list_dirctory'" in message and "'list_directory'" in message

    def test_the_name_used_more_often_is_the_suggestion(self) -> None:
        """With `list_directory` named twice, the once-named spelling is the suspect."""
        text = TWO.replace("O list_dirctory", "G(list_directory -> F read_file)")
        text += "constraint typo := F list_dirctory\n"
        ((_, line, message),) = kinds(text)
        assert line == 3 and "did you mean 'list_directory'?" in message

    def test_a_near_miss_of_the_final_tool_is_flagged_however_often_used(self) -> None:
        """`final_answr` is never the final answer; said twice it is still a typo."""
        ((_, _, message),) = kinds("constraint a := F final_answr & G(final_answr -> O a)")
        assert "did you mean 'final_answer'?" in message

    @pytest.mark.parametrize(
        "text",
        [
            "constraint a := G(set_a -> O get_a)",  # one formula relating two tools
            "constraint a := G(refund -> O verify)\nconstraint b := F notify",
            "constraint a := G(get_a -> O set_a)\nconstraint b := G(get_a -> X get_a)",
            "constraint a := G(user_message -> F assistant_message)",
            # a series: the same length, differing in the last letter, first letter, digits
            "constraint a := G(tool_b -> O tool_a) & F tool_b\nconstraint b := F tool_c",
            "constraint a := G(read_x -> F read_x)\nconstraint b := F lead_x",
            "constraint a := G(step1_x -> F step1_x)\nconstraint b := F step2_x",
        ],
    )
    def test_distinct_tools_are_not_flagged(self, text: str) -> None:
        """Names far apart, near names one formula relates, the dialogue events: silent."""
        assert kinds(text) == []

    def test_declared_tools_are_checked_by_the_resolver_with_a_did_you_mean(self) -> None:
        """With declarations the name is an error already, now naming the closest one."""
        with pytest.raises(SpecSemanticError, match="did you mean 'list_directory'"):
            parse_spec("tool list_directory()\nconstraint b := O list_dirctory")


SCHEMAS: dict[str, Any] = {
    "list_directory": {"type": "object", "properties": {"path": {"type": "string"}}},
    "read_file": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}


class TestAgainstAToolList:
    def test_every_name_outside_the_list_is_unknown(self) -> None:
        """A list decides exactly: even a name used twice, with the closest listed tool."""
        text = "constraint a := G(read_file -> O list_dirctory) & F list_dirctory"
        ((kind, line, message),) = kinds(text, SCHEMAS)
        assert kind == "unknown-tool" and line == 1
        assert "named 2 times" in message and "did you mean 'list_directory'?" in message

    def test_a_name_with_no_near_tool_lists_the_tools(self) -> None:
        """No close name: the message lists the agent's tools instead."""
        ((_, _, message),) = kinds("constraint a := F upload", SCHEMAS)
        assert "the agent's tools: list_directory, read_file" in message

    def test_declarations_are_compared_with_the_schemas(self) -> None:
        """A declared type the schema contradicts, and a declared tool not in the list."""
        text = "tool read_file(path: number)\ntool remove(path: str)\nconstraint a := G !remove"
        found = kinds(text, SCHEMAS)
        assert ("unknown-tool", 2) in [(k, line) for k, line, _ in found]
        mismatch = [m for k, _, m in found if k == "tool-mismatch"]
        assert len(mismatch) == 1 and "declared number" in mismatch[0]

    def test_final_tool_and_dialogue_events_are_never_unknown(self) -> None:
        """Names every spec may use need no place in the list."""
        text = "constraint a := F final_answer & G(read_file -> O user_message)"
        assert kinds(text, SCHEMAS) == []

    def test_a_matching_spec_is_clean(self) -> None:
        """Every name listed, declarations matching: nothing."""
        assert kinds(TWO.replace("dirctory", "directory"), SCHEMAS) == []


NAMES = st.text(alphabet="abc_-", min_size=0, max_size=7)


def _reference(a: str, b: str) -> int:
    """Optimal string alignment distance, the textbook table (no cut-off)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@given(NAMES, NAMES, st.integers(0, 3))
def test_edit_distance_is_the_alignment_distance_up_to_its_limit(a: str, b: str, k: int) -> None:
    """Exact up to ``limit``; ``limit + 1`` once beyond; symmetric."""
    assert edit_distance(a, b, k) == min(_reference(a, b), k + 1)
    assert edit_distance(b, a, k) == edit_distance(a, b, k)


@given(NAMES, NAMES)
def test_near_miss_is_symmetric_and_irreflexive(a: str, b: str) -> None:
    """A name is no near miss of itself; the relation does not depend on the order."""
    assert not near_miss(a, a)
    assert near_miss(a, b) == near_miss(b, a)
