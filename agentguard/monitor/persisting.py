"""What a monitor keeps of a run, and how it goes on from it: state files and forks.

A :class:`~agentguard.monitor.monitor.Monitor` steps and peeks; this base gives it its
saved-state format (``agentguard.monitor/1``: the spec's fingerprint, the position, each
constraint's node state, the error judge's kept calls and the provenance indexes; signed
with a key when one is given) and its snapshots of one constraint, which a firewall forks
a monitor from when a result breaks it late. One home for the format: issue 29 owns it,
the firewall, the LangGraph checkpoints and ``Firewall.restore`` read it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from typing_extensions import Self

from agentguard.errors import AgentGuardError
from agentguard.language import ast as A
from agentguard.monitor.compiled import CompiledSpec
from agentguard.monitor.judge import ErrorJudge
from agentguard.monitor.nodes import Node
from agentguard.monitor.peek import COPYABLE, Peek, Snapshot
from agentguard.monitor.persistence import expect_int, expect_mapping
from agentguard.monitor.routing import Router
from agentguard.monitor.signing import Key, sign, verify
from agentguard.monitor.verdict import Verdict
from agentguard.semantics.provenance_index import ProvenanceState
from agentguard.semantics.registry import Matcher, Registry

STATE_FORMAT: Final = "agentguard.monitor/1"


class MonitorStateError(AgentGuardError, ValueError):
    """A saved monitor state does not fit this spec or is malformed."""


class Persisting:
    """State files and forks of a monitor (the monitor's attributes, declared here)."""

    registry: Registry
    match: Matcher
    uncounted: frozenset[str]
    constraints: tuple[A.Constraint, ...]
    position: int
    _nodes: dict[str, Node]
    _verdicts: dict[str, Verdict]
    _judge: ErrorJudge | None
    _prov: ProvenanceState | None
    _fingerprint: str
    _still: Peek | None
    _unstable: set[str]
    _router: Router | None

    def __init__(
        self,
        spec: A.Spec | Sequence[A.Constraint] | CompiledSpec,
        *,
        registry: Registry | None = None,
        match: Matcher | None = None,
        uncounted: Iterable[str] = (),
    ) -> None:
        raise NotImplementedError  # pragma: no cover - the monitor's own

    def _build_router(self) -> Router | None:
        raise NotImplementedError  # pragma: no cover - the monitor's own

    # ------------------------------------------------------------------ forks
    def snapshot(self, name: str) -> Snapshot:
        """The state of constraint ``name`` now, to start a monitor of it from later
        (:meth:`fork`) without keeping the calls that led here. Cheap for an automaton or a
        counter (their state is immutable values); other nodes are saved as a document."""
        node = self._nodes[name]
        judge = self._judge
        kept = judge.part(name) if judge is not None and name in judge.constraints else None
        prov = None if self._prov is None else self._prov.save()
        if type(node) in COPYABLE:
            return Snapshot(name, self.position, copy.copy(node), None, kept, prov)
        return Snapshot(name, self.position, None, node.save(), kept, prov)

    def fork(self, snap: Snapshot) -> Self:
        """A monitor of the one constraint of ``snap``, continuing from that state."""
        constraint = next(c for c in self.constraints if c.name == snap.name)
        m = type(self)(
            [constraint], registry=self.registry, match=self.match, uncounted=self.uncounted
        )
        if snap.node is not None:
            m._nodes[snap.name] = copy.copy(snap.node)  # the snapshot may fork again
        else:
            m._nodes[snap.name].restore(snap.doc or {})
        m.position = snap.position
        if self._prov is not None:  # lowered constraints: the fork reads the same facts
            m._prov = ProvenanceState(self._prov.plan)
            m._prov.restore(snap.provenance)
        node = m._nodes[snap.name]
        m._verdicts[snap.name] = node.verdict()
        if m._judge is not None and snap.judge is not None:
            m._judge.go_on(snap.name, snap.judge, m._verdicts)
        m._still = None
        m._unstable = {snap.name} if node.names is not None and not node.stable() else set()
        m._router = m._build_router()
        return m

    # ------------------------------------------------------------------ state files
    def save(self, *, key: Key | None = None) -> dict[str, Any]:
        """A JSON-able document of the monitor state (continue it with :meth:`restore`);
        with ``key``, authenticated (an HMAC that ``restore(..., key=...)`` checks)."""
        return sign(
            {
                "format": STATE_FORMAT,
                "spec": self._fingerprint,
                "position": self.position,
                "constraints": {n: node.save() for n, node in self._nodes.items()},
                **({"judge": self._judge.save()} if self._judge is not None else {}),
                **({"provenance": self._prov.save()} if self._prov is not None else {}),
            },
            key,
        )

    def _restore(self, doc: Mapping[str, Any], key: Key | None = None) -> None:
        """Put a state saved by :meth:`save` into this fresh monitor of the same spec."""
        if not isinstance(doc, Mapping) or doc.get("format") != STATE_FORMAT:
            raise MonitorStateError(
                f"not a monitor state document (expected format {STATE_FORMAT})"
            )
        if doc.get("spec") != self._fingerprint:
            raise MonitorStateError("the saved state belongs to a different spec")
        refused = verify(doc, key)
        if refused:
            raise MonitorStateError(refused)
        try:
            self.position = expect_int(doc.get("position"), "position")
            saved = expect_mapping(doc.get("constraints"), "constraints")
            if set(saved) != set(self._nodes):
                raise ValueError("the saved constraints are not this spec's")
            for name, node in self._nodes.items():
                node.restore(saved[name])
            if self._prov is not None:
                self._prov = ProvenanceState(self._prov.plan)
                self._prov.restore(doc.get("provenance"))
        except (KeyError, TypeError, ValueError, IndexError, RecursionError) as exc:
            raise MonitorStateError(f"malformed monitor state: {exc}") from None
        for name, node in self._nodes.items():
            self._verdicts[name] = node.verdict()
        if self._judge is not None:
            self._judge = ErrorJudge(self.constraints, self._judge.names, self.registry, self.match)
            try:
                if "judge" in doc:
                    self._judge.restore(expect_mapping(doc["judge"], "judge"), self._verdicts)
                else:  # saved before the judge existed (a LangGraph checkpoint, say)
                    self._judge.restore_old(self.position, self._nodes, self._verdicts)
            except (KeyError, TypeError, ValueError) as exc:
                raise MonitorStateError(f"malformed monitor state: {exc}") from None
        self._still = None
        self._unstable = {
            n for n, node in self._nodes.items() if node.names is not None and not node.stable()
        }
        self._router = self._build_router()

    @classmethod
    def restore(
        cls,
        spec: A.Spec | Sequence[A.Constraint] | CompiledSpec,
        doc: Mapping[str, Any],
        *,
        registry: Registry | None = None,
        match: Matcher | None = None,
        uncounted: Iterable[str] = (),
        key: Key | None = None,
    ) -> Self:
        """A monitor continuing the run ``doc`` was saved from (:meth:`save`); with
        ``key``, only a document saved with that key and not edited since."""
        m = cls(spec, registry=registry, match=match, uncounted=uncounted)
        m._restore(doc, key)
        return m


__all__ = ["STATE_FORMAT", "MonitorStateError", "Persisting"]
