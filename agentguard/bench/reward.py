"""The compliance reward of AgentLTL Section 4.3 and Appendix E.

``R = w_C·C + w_A·Acc + w_D·R_dist`` with ``(w_C, w_A, w_D) = (α, (1-α)/2, (1-α)/2)``,
``α = 0.5`` by default. ``C`` is the compliance score of the trace on its spec,
``Acc`` the shaped answer correctness of E.1 (1.0 / 0.1 / 0.0), and
``R_dist = exp(-d)`` with ``d`` the weighted Levenshtein distance of E.2 between
the gold and predicted traces (same tool, different args: 0.5; different tool: 1.0;
insertion / deletion: 1.0).

:func:`make_grpo_reward` wraps it as a TRL ``GRPOTrainer`` reward function: TRL calls
``reward(prompts=..., completions=..., completion_ids=..., trainer_state=..., **columns)``
and passes every other dataset column as a keyword holding one value per sample;
the spec, gold trace and expected answer ride in as the columns ``spec``,
``gold_trace`` and ``expected_answer``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentguard.bench.errors import BenchError
from agentguard.language import parse_spec
from agentguard.scoring import verify_trace
from agentguard.trace.formats.openai_chat import from_openai_messages
from agentguard.trace.model import Call, Trace

Step = tuple[str, Mapping[str, Any]]
ComplianceFn = Callable[[Trace, Any], float]


@dataclass(frozen=True, slots=True)
class RewardWeights:
    """The three weights of Eq. (2); the paper's run uses ``α = 0.5``."""

    compliance: float = 0.5
    accuracy: float = 0.25
    distance: float = 0.25

    @classmethod
    def from_alpha(cls, alpha: float) -> RewardWeights:
        """Eq. (3): ``(α, (1-α)/2, (1-α)/2)``."""
        if not 0.0 <= alpha <= 1.0:
            raise BenchError(f"alpha must be in [0, 1], got {alpha}")
        return cls(alpha, (1 - alpha) / 2, (1 - alpha) / 2)


_ANSWER_TAG_RE = re.compile(r"ANSWER\s*:[ \t]*([^\n]*)", re.IGNORECASE)
_INTEGER_RE = re.compile(r"-?\d+")
_NUMBER_LIKE_RE = re.compile(r"[-+]?[\d.,]*\d[\d.,]*(?:[eE][-+]?\d+)?")

AnswerFormat = Literal["integer", "malformed_number", "unformatted"]
"""How an answer reads (E.1, Section 4.2's exact integer match):

- ``integer``: ``ANSWER: n`` (the last such line) or a bare integer, n an exact integer
  (optional minus sign and digits only);
- ``malformed_number``: the answer format holds a number that is not an exact integer
  (``ANSWER: 33.5``, ``ANSWER: 33,000``, ``ANSWER: 3.3e1``, ``ANSWER: +33``, a float):
  correct format, wrong value, so E.1's 0.1;
- ``unformatted``: anything else (no ``ANSWER:`` line and no bare integer, or a tag
  followed by words): E.1's 0.0.
"""


def answer_format(answer: Any) -> tuple[AnswerFormat, int | None]:
    """The answer's format class and, for an exact integer, its value."""
    if isinstance(answer, bool):
        return ("unformatted", None)
    if isinstance(answer, int):
        return ("integer", answer)
    if isinstance(answer, float):
        return ("malformed_number", None)
    if not isinstance(answer, str):
        return ("unformatted", None)
    tagged = _ANSWER_TAG_RE.findall(answer)
    token = tagged[-1].strip() if tagged else answer.strip()
    if _INTEGER_RE.fullmatch(token):
        return ("integer", int(token))
    if _NUMBER_LIKE_RE.fullmatch(token):
        return ("malformed_number", None)
    return ("unformatted", None)


def parse_answer(answer: Any) -> int | None:
    """The exact integer of a well-formatted answer (``ANSWER: n`` or a bare integer), else None."""
    return answer_format(answer)[1]


def shaped_accuracy(answer: Any, expected: int) -> float:
    """E.1: 1.0 correct; 0.1 well-formatted but wrong (a malformed number too); 0.0 else."""
    kind, value = answer_format(answer)
    if kind == "unformatted":
        return 0.0
    return 1.0 if value == expected else 0.1


def _normal(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    return value


def as_steps(trace: Iterable[Any]) -> list[Step]:
    """(name, args) pairs from a Trace, Calls, ``{tool_name, arguments}`` records or pairs."""
    steps: list[Step] = []
    for item in trace:
        if isinstance(item, Call):
            steps.append((item.name, item.args))
        elif isinstance(item, Mapping):
            call = Trace.from_records([item])[0]
            steps.append((call.name, call.args))
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str):
            steps.append((item[0], dict(item[1])))
        else:
            raise BenchError(f"cannot read a tool call from {item!r}")
    return steps


def substitution_cost(gold: Step, predicted: Step) -> float:
    """E.2's ``s(g, p)``: 0 exact, 0.5 same tool with other args, 1.0 another tool."""
    if gold[0] != predicted[0]:
        return 1.0
    return 0.0 if _normal(gold[1]) == _normal(predicted[1]) else 0.5


def trace_distance(gold: Iterable[Any], predicted: Iterable[Any]) -> float:
    """The weighted Levenshtein distance ``d(G, P) = D(n, m)`` of Eqs. (5)-(6)."""
    g, p = as_steps(gold), as_steps(predicted)
    prev = [float(j) for j in range(len(p) + 1)]
    for i in range(1, len(g) + 1):
        cur = [float(i)] + [0.0] * len(p)
        for j in range(1, len(p) + 1):
            cur[j] = min(
                prev[j] + 1.0,
                cur[j - 1] + 1.0,
                prev[j - 1] + substitution_cost(g[i - 1], p[j - 1]),
            )
        prev = cur
    return prev[-1]


def distance_reward(gold: Iterable[Any], predicted: Iterable[Any]) -> float:
    """Eq. (7): ``R_dist = exp(-d(G, P))``."""
    return math.exp(-trace_distance(gold, predicted))


@functools.lru_cache(maxsize=512)
def _parsed(spec_text: str) -> Any:
    """Specs repeat across a GRPO group (one prompt, many rollouts): parse each once."""
    return parse_spec(spec_text, source="<reward spec>")


def core_compliance(trace: Trace, spec: Any) -> float:
    """``C(τ, G_P)`` via the core's ``verify_trace``; ``spec`` is a Spec or `.ltl` text."""
    if isinstance(spec, str):
        spec = _parsed(spec)
    return float(verify_trace(trace, spec).score)


@dataclass(frozen=True, slots=True)
class RewardBreakdown:
    """The reward and its three terms."""

    reward: float
    compliance: float
    accuracy: float
    distance: float
    trace_distance: float

    def to_dict(self) -> dict[str, float]:
        return {
            "reward": self.reward,
            "compliance": self.compliance,
            "accuracy": self.accuracy,
            "distance": self.distance,
            "trace_distance": self.trace_distance,
        }


def compliance_reward(
    trace: Trace,
    answer: Any,
    *,
    spec: Any,
    gold_trace: Iterable[Any],
    expected_answer: int,
    weights: RewardWeights = RewardWeights(),
    compliance: ComplianceFn = core_compliance,
) -> RewardBreakdown:
    """Eq. (2) for one trajectory."""
    c = compliance(trace, spec)
    acc = shaped_accuracy(answer, expected_answer)
    d = trace_distance(gold_trace, trace)
    r_dist = math.exp(-d)
    total = weights.compliance * c + weights.accuracy * acc + weights.distance * r_dist
    return RewardBreakdown(total, c, acc, r_dist, d)


# -- TRL adapter --------------------------------------------------------------------------

_RECORD_LINE = re.compile(r"^\s*\{.*\}\s*$")


def completion_trace(completion: Any) -> tuple[Trace, str | None]:
    """The trace and final answer of one TRL completion.

    Conversational completions (a list of chat messages with assistant ``tool_calls``
    and ``tool`` replies) are read with ``agentguard.trace.from_openai_messages``; the answer is
    the last assistant text. Text completions are scanned for one JSON record per line
    (``{"tool_name", "arguments", "tool_result"}``) and an ``ANSWER: n`` line.
    """
    if isinstance(completion, Sequence) and not isinstance(completion, str):
        messages = [m for m in completion if isinstance(m, Mapping)]
        return from_openai_messages(messages), completion_answer(completion)
    text = str(completion)
    records = []
    for line in text.splitlines():
        if _RECORD_LINE.match(line):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, Mapping) and ("tool_name" in record or "name" in record):
                records.append(record)
    return Trace.from_records(records, source="<completion>"), text


def completion_answer(completion: Any) -> str | None:
    """The final answer of one TRL completion: the last assistant text of a conversation,
    or the whole text of a text completion. Reads no tool call, so a call the model wrote
    malformed (which never ran) cannot stop the scoring of an executed trace."""
    if isinstance(completion, Sequence) and not isinstance(completion, str):
        return next(
            (
                str(m.get("content"))
                for m in reversed(completion)
                if isinstance(m, Mapping) and m.get("role") == "assistant" and m.get("content")
            ),
            None,
        )
    return str(completion)


def _column(value: Any) -> Any:
    """Dataset columns may hold JSON text (Arrow-friendly) or the value itself."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def make_grpo_reward(
    *,
    weights: RewardWeights = RewardWeights(),
    compliance: ComplianceFn = core_compliance,
    name: str = "agentltl_reward",
) -> Callable[..., list[float]]:
    """A TRL ``GRPOTrainer`` reward function over the columns spec / gold_trace / expected_answer.

    Signature: ``reward(prompts, completions, *, spec, gold_trace, expected_answer,
    traces=None, environments=None, log_metric=None, **kwargs) -> list[float]``. The trace
    scored is, first found: the executed calls of the rollout's environment (TRL passes
    ``environments`` when the trainer runs tools through ``environment_factory``; each
    one's ``records``, see :mod:`agentguard.bench.environment`), the ``traces`` column or
    keyword (records the user's own rollout loop kept), else the trace read from the
    completion itself (the text path: there the tool results are whatever the model wrote).
    """

    def reward(
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        *,
        spec: Sequence[Any],
        gold_trace: Sequence[Any],
        expected_answer: Sequence[Any],
        traces: Sequence[Any] | None = None,
        environments: Sequence[Any] | None = None,
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        del prompts, kwargs  # completion_ids, trainer_state and other columns are unused
        out: list[float] = []
        parts: list[RewardBreakdown] = []
        for k, completion in enumerate(completions):
            answer = completion_answer(completion)
            executed = getattr(environments[k], "records", None) if environments else None
            if executed is not None:
                trace = Trace.from_records(executed, source="<executed rollout>")
            elif traces is not None and traces[k] is not None:
                trace = Trace.from_records(_column(traces[k]), source="<traces column>")
            else:
                trace, answer = completion_trace(completion)
            breakdown = compliance_reward(
                trace,
                answer,
                spec=spec[k],
                gold_trace=_column(gold_trace[k]),
                expected_answer=int(expected_answer[k]),
                weights=weights,
                compliance=compliance,
            )
            out.append(breakdown.reward)
            parts.append(breakdown)
        if log_metric is not None and parts:
            # TRL logs only the sum; the three terms show which one training moves
            for term in ("compliance", "accuracy", "distance"):
                log_metric(f"{name}/{term}", sum(getattr(b, term) for b in parts) / len(parts))
        return out

    reward.__name__ = name
    reward.__qualname__ = name
    return reward
