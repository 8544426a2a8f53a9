"""ToolSandbox adapter: replay runs on ToolSandbox's own scenarios, across a process boundary.

ToolSandbox (apple/ToolSandbox) is not on the package index and pins releases that
conflict with agentguard's (langchain 0.1, pydantic 2.7, numpy 1.26), so it lives in an
environment of its own. :class:`ToolSandboxWorker` starts that environment's python on
:mod:`agentguard.pec.toolsandbox_worker` and exchanges JSON lines with it; the python is
named by ``--toolsandbox-python`` or the ``AGENTGUARD_TOOLSANDBOX_PYTHON`` variable.

:class:`ToolSandboxEnvironment` resets a scenario's world state exactly as ToolSandbox's
``Scenario.play`` builds it and executes each call through ToolSandbox's execution
environment (the code its agents generate): an exception (a rejected argument, a
precondition of the world state such as cellular service being off) refuses the call,
and so does reaching one of the scenario's minefields. :func:`toolsandbox_oracle` adds
the schema stage over the agent-facing tools of the scenario (ToolSandbox's own OpenAI
schemas, scrambled names included).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from agentguard.language.ast import ToolDecl
from agentguard.pec.declarations import declarations_from_json_schema
from agentguard.pec.environment import Execution
from agentguard.pec.episode import Episode
from agentguard.pec.errors import ReplayError
from agentguard.pec.oracle import Oracle
from agentguard.trace.model import Call

PYTHON_VARIABLE: Final = "AGENTGUARD_TOOLSANDBOX_PYTHON"
"""Environment variable naming the python of ToolSandbox's environment."""

WORKER: Final = Path(__file__).with_name("toolsandbox_worker.py")
"""The script that python runs (it imports only the standard library and ``tool_sandbox``)."""

ANSWER_TIMEOUT: Final = 900.0
"""Seconds a worker may take to answer one request (building the scenarios takes ~20-35 s)."""

MINEFIELD: Final = "minefield reached"
"""How a replay words a call that reached one of the scenario's minefields."""


def find_python(explicit: str | None = None) -> str:
    """The python of ToolSandbox's environment: ``explicit``, else ``$AGENTGUARD_TOOLSANDBOX_PYTHON``."""
    python = explicit or os.environ.get(PYTHON_VARIABLE)
    if not python:
        raise ReplayError(
            "ToolSandbox's environment is not known: pass --toolsandbox-python PATH or set "
            f"{PYTHON_VARIABLE} to the python of a virtualenv where ToolSandbox is installed "
            "(docs/pec.md, 'ToolSandbox')"
        )
    if not Path(python).is_file():
        raise ReplayError(f"ToolSandbox python {python!r} does not exist")
    return python


@dataclass(frozen=True, slots=True)
class ScenarioInfo:
    """One named ToolSandbox scenario, as its worker describes it."""

    name: str
    categories: tuple[str, ...]
    network: bool
    """Its task needs a RapidAPI tool (the network): out of scope offline."""
    milestones: int
    minefields: int
    untraced: tuple[str, ...]
    """``"i:NAMESPACE"`` for each milestone constraining a database without naming a call."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """ToolSandbox's evaluation of one run: milestone, minefield and combined similarity."""

    milestone_similarity: float
    minefield_similarity: float
    similarity: float


class ToolSandboxWorker:
    """A ToolSandbox process answering JSON lines; one request at a time.

    Building ToolSandbox's 1,032 named scenarios takes the worker about 20 s once; every
    later request reuses them.
    """

    def __init__(self, python: str | None = None, *, timeout: float = ANSWER_TIMEOUT) -> None:
        self.python = find_python(python)
        self.timeout = timeout
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self._process = subprocess.Popen(
            [self.python, "-I", str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
        )
        self._scenarios: dict[str, ScenarioInfo] | None = None
        self._tools: dict[str, dict[str, ToolDecl]] = {}

    def ask(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request; the answer, or :class:`ReplayError` with the worker's words."""
        process = self._process
        if process.stdin is None or process.stdout is None or process.poll() is not None:
            raise ReplayError(f"the ToolSandbox worker has stopped{self._last_words()}")
        process.stdin.write(json.dumps({"op": op, **fields}) + "\n")
        process.stdin.flush()
        # one request, one line: nothing is left buffered, so select sees the answer coming
        ready, _, _ = select.select([process.stdout], [], [], self.timeout)
        if not ready:
            process.kill()
            raise ReplayError(
                f"the ToolSandbox worker gave no answer to {op!r} in {self.timeout:g} s"
            )
        line = process.stdout.readline()
        if not line:
            raise ReplayError(f"the ToolSandbox worker stopped{self._last_words()}")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise ReplayError(f"ToolSandbox: {answer.get('error')}")
        return answer

    def _last_words(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read().decode("utf-8", "replace").strip().splitlines()[-3:]
        return (": " + " | ".join(tail)) if tail else ""

    def scenarios(self) -> dict[str, ScenarioInfo]:
        """Every named scenario by name (ToolSandbox's ``named_scenarios``)."""
        if self._scenarios is None:
            self._scenarios = {
                row["name"]: ScenarioInfo(
                    row["name"],
                    tuple(row["categories"]),
                    bool(row["network"]),
                    int(row["milestones"]),
                    int(row["minefields"]),
                    tuple(row["untraced"]),
                )
                for row in self.ask("scenarios")["scenarios"]
            }
        return self._scenarios

    def scenario(self, name: str) -> ScenarioInfo:
        info = self.scenarios().get(name)
        if info is None:
            raise ReplayError(f"no ToolSandbox scenario {name!r}")
        return info

    def tools(self, scenario: str) -> dict[str, ToolDecl]:
        """The agent-facing tools of a scenario as declarations (ToolSandbox's OpenAI schemas)."""
        if scenario not in self._tools:
            self.scenario(scenario)
            schemas = self.ask("tools", scenario=scenario)["tools"]
            self._tools[scenario] = declarations_from_json_schema(schemas)
        return self._tools[scenario]

    def evaluate(self, context_file: str | Path, scenario: str) -> Evaluation:
        """ToolSandbox's milestone and minefield evaluation of a recorded execution context."""
        answer = self.ask("evaluate", path=str(Path(context_file).resolve()), scenario=scenario)
        return Evaluation(
            answer["milestone_similarity"], answer["minefield_similarity"], answer["similarity"]
        )

    def close(self) -> None:
        """End the worker (closing its stdin ends its loop) and release the pipes."""
        process = self._process
        if process.stdin is not None:
            with contextlib.suppress(OSError):  # a worker that died leaves a broken pipe
                process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> ToolSandboxWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_shared: dict[str, ToolSandboxWorker] = {}


def shared_worker(python: str | None = None) -> ToolSandboxWorker:
    """One worker per python for this process (the CLI loads and replays with the same one)."""
    path = find_python(python)
    worker = _shared.get(path)
    if worker is None:
        worker = _shared[path] = ToolSandboxWorker(path)
        atexit.register(worker.close)
    return worker


class ToolSandboxEnvironment:
    """ToolSandbox's world state, reset per replay to a scenario's starting context.

    ``execute`` runs the agent's call as ToolSandbox does; it is refused when ToolSandbox
    answers with an exception or when the call reaches one of the scenario's minefields.
    ``execute_user`` runs the simulated user's calls (``end_conversation``) in place.
    """

    def __init__(self, worker: ToolSandboxWorker) -> None:
        self.worker = worker

    def reset(self, task_id: str) -> None:
        self.worker.scenario(task_id)
        self.worker.ask("reset", scenario=task_id)

    def execute(self, call: Call) -> Execution:
        answer = self.worker.ask("execute", name=call.name, arguments=dict(call.args))
        if answer["minefield"]:
            return False, f"{MINEFIELD}: {answer['result']}"
        return bool(answer["accepted"]), answer["result"]

    def execute_user(self, call: Call) -> Execution:
        answer = self.worker.ask(
            "execute", name=call.name, arguments=dict(call.args), requestor="user"
        )
        return bool(answer["accepted"]), answer["result"]

    def close(self) -> None:
        """Nothing to release: the next ``reset`` replaces the world state."""


def ground_truth_episode(worker: ToolSandboxWorker, scenario: str) -> Episode:
    """The call sequence a scenario's milestones give, as an episode (``method=ground-truth``).

    The calls are the milestones' tool traces in a topological order of the milestone DAG;
    an argument a milestone fills from an earlier call's result is filled from that call
    as ToolSandbox runs it. Raises :class:`ReplayError` when the scenario gives no
    complete call sequence (:func:`call_sequence_gap` says why).
    """
    gap = call_sequence_gap(worker.scenario(scenario))
    if gap is not None:
        raise ReplayError(f"ToolSandbox scenario {scenario!r} gives no call sequence: {gap}")
    answer = worker.ask("ground_truth", scenario=scenario)
    if answer.get("unresolved"):
        raise ReplayError(f"ToolSandbox scenario {scenario!r}: {answer['unresolved']}")
    calls = tuple(Call(c["name"], dict(c["arguments"])) for c in answer["calls"])
    if not calls:
        raise ReplayError(f"ToolSandbox scenario {scenario!r}: its milestones name no call")
    info = worker.scenario(scenario)
    labels = {
        "dataset": "toolsandbox",
        "method": "ground-truth",
        "categories": "+".join(sorted(info.categories)),
    }
    return Episode(scenario, calls, True, labels)


def call_sequence_gap(info: ScenarioInfo) -> str | None:
    """Why a scenario's milestones give no complete offline call sequence (None: they do)."""
    if info.network:
        return "its task needs RapidAPI (the network)"
    if info.milestones == 0:
        return f"no milestone (only {info.minefields} minefield(s): the task cannot be done)"
    if info.untraced:
        return "milestones constrain a database without naming a call: " + ", ".join(info.untraced)
    return None


def toolsandbox_oracles(worker: ToolSandboxWorker) -> Callable[[Episode], Oracle]:
    """The oracle of each episode's scenario: schema over its agent-facing tools, then replay.

    Tools differ per scenario (allow lists, distraction tools, scrambled names), so each
    scenario gets its own oracle; all share one environment (one worker). The information
    stage is off: ToolSandbox's verdict (an exception or not) is the stronger evidence.
    """
    environment = ToolSandboxEnvironment(worker)
    oracles: dict[str, Oracle] = {}

    def oracle_for(episode: Episode) -> Oracle:
        scenario = episode.task_id
        if scenario not in oracles:
            oracles[scenario] = Oracle.build(
                tools=worker.tools(scenario), environment=environment, is_error=None
            )
        return oracles[scenario]

    return oracle_for


__all__ = [
    "ANSWER_TIMEOUT",
    "MINEFIELD",
    "PYTHON_VARIABLE",
    "WORKER",
    "Evaluation",
    "ScenarioInfo",
    "ToolSandboxEnvironment",
    "ToolSandboxWorker",
    "call_sequence_gap",
    "find_python",
    "ground_truth_episode",
    "shared_worker",
    "toolsandbox_oracles",
]
