"""One quantifier-free formula built into one machine: atoms, registers, residual nodes.

The paper's trace predicates are global (their value does not depend on the position);
each is translated to its anchored LTLf equivalent (``Called(t)`` = ``F t``,
``Before(a, b)`` = ``(!a & !b) U (a & !b & X F b)``, ``CalledN`` by nested occurrences...).
One nested under a temporal operator is expanded at the root by Shannon's rule:
``φ[P] ≡ (P₀ ∧ φ[⊤]) ∨ (¬P₀ ∧ φ[⊥])`` with ``P₀`` the anchored formula. Past-time operators
become registers (their value at the previous position). What the machine cannot follow
raises :class:`~agentguard.monitor.atoms.Unsupported`, and the plan falls back
(:mod:`agentguard.monitor.compile`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

from typing_extensions import assert_never

from agentguard.language import ast as A
from agentguard.monitor.atoms import (
    Atom,
    EventAtom,
    FrozenAtom,
    NonEmpty,
    PastAtom,
    Placeholder,
    Unsupported,
    uses_metrics,
)
from agentguard.monitor.formula import FALSE, TRUE, Store
from agentguard.monitor.machine import Machine
from agentguard.monitor.registers import Past, Register
from agentguard.semantics.registry import Matcher
from agentguard.semantics.variables import free_variables

MAX_SHANNON = 6
"""Trace predicates under temporal operators expanded per constraint (2^k branches)."""
MAX_COUNT = 64
"""Largest count (CalledN, InstanceBefore) unrolled into nested occurrences; larger counts
are checked at the end of the run."""

_GROUPABLE_OPS = frozenset({"=", "!=", "contains"})


# ---------------------------------------------------------------------- builder
@dataclass(slots=True)
class _Builder:
    var: str | None
    store: Store = field(default_factory=Store)
    atoms: list[Atom] = field(default_factory=list)
    atom_ids: dict[Atom, int] = field(default_factory=dict)
    registers: list[Register] = field(default_factory=list)
    register_ids: dict[Register, int] = field(default_factory=dict)
    placeholders: list[A.TracePredicate] = field(default_factory=list)

    def atom(self, a: Atom) -> int:
        found = self.atom_ids.get(a)
        if found is None:
            found = len(self.atoms)
            self.atoms.append(a)
            self.atom_ids[a] = found
        return found

    def lit(self, a: Atom, positive: bool = True) -> int:
        return self.store.lit(self.atom(a), positive)

    # -------------------------------------------------------------- formulas
    def build(self, f: A.Formula, temporal: bool) -> int:
        s = self.store
        if isinstance(f, A.Const):
            return TRUE if f.value else FALSE
        if isinstance(f, A.Event):
            self._check_tests(f.tests)
            return self.lit(EventAtom(f.tool, f.tests, outcome=f.outcome))
        if isinstance(f, (A.Compare, A.UserPredicate)):
            return self._frozen(f)
        if isinstance(f, A.Not):
            return s.neg(self.build(f.operand, temporal))
        if isinstance(f, A.And):
            return s.and_((self.build(f.left, temporal), self.build(f.right, temporal)))
        if isinstance(f, A.Or):
            return s.or_((self.build(f.left, temporal), self.build(f.right, temporal)))
        if isinstance(f, A.Implies):
            return s.or_((s.neg(self.build(f.left, temporal)), self.build(f.right, temporal)))
        if isinstance(f, A.Iff):
            a, b = self.build(f.left, temporal), self.build(f.right, temporal)
            return s.or_((s.and_((a, b)), s.and_((s.neg(a), s.neg(b)))))
        if isinstance(f, A.Next):
            return s.next_(self.build(f.operand, True), f.strong)
        if isinstance(f, A.Eventually):
            return s.eventually(self.build(f.operand, True), f.bound)
        if isinstance(f, A.Always):
            return s.always(self.build(f.operand, True), f.bound)
        if isinstance(f, A.Until):
            return s.until(self.build(f.left, True), self.build(f.right, True))
        if isinstance(f, A.WeakUntil):
            a, b = self.build(f.left, True), self.build(f.right, True)
            return s.release(b, s.or_((a, b)))
        if isinstance(f, A.Release):
            return s.release(self.build(f.left, True), self.build(f.right, True))
        if isinstance(f, (A.Yesterday, A.Once, A.Historically, A.Since)):
            return self._past(f)
        if isinstance(f, A.TracePredicate):
            if not temporal:
                return self.anchored(f)
            if f not in self.placeholders:
                self.placeholders.append(f)
            return self.lit(Placeholder(self.placeholders.index(f)))
        if isinstance(f, A.Quantified):
            raise Unsupported("a quantifier inside a machine")  # the plan handles top ones
        assert_never(f)

    def _check_tests(self, tests: tuple[A.Test, ...]) -> None:
        for t in tests:
            if uses_metrics(t.value) or isinstance(t.value, A.Domain):
                raise Unsupported("a test against metrics or a domain")
            names = free_variables(t.value)
            if not names:
                continue
            if self.var is None or names != {self.var}:
                raise Unsupported("a test on an unbound variable")
            plain = isinstance(t.value, A.Var) and not t.value.path
            if not plain or t.op not in _GROUPABLE_OPS:
                raise Unsupported(f"the test '{t.op}' on a quantified variable")

    def _frozen(self, f: A.Compare | A.UserPredicate) -> int:
        terms = (f.left, f.right) if isinstance(f, A.Compare) else f.args
        if any(isinstance(t, A.Domain) for t in terms):
            raise Unsupported("a comparison with a domain")
        names = free_variables(f)
        if names and (self.var is None or names != {self.var}):
            raise Unsupported("a comparison on an unbound variable")
        return self.lit(FrozenAtom(f, uses_metrics(f)))

    def _past(self, f: A.Yesterday | A.Once | A.Historically | A.Since) -> int:
        if isinstance(f, A.Since):
            return self._register(
                Register(Past.SINCE, self._past_operand(f.left), self._past_operand(f.right))
            )
        if isinstance(f, A.Yesterday):
            return self._register(
                Register(
                    Past.YESTERDAY if f.strong else Past.WEAK_YESTERDAY,
                    self._past_operand(f.operand),
                )
            )
        op = self._past_operand(f.operand)
        once = isinstance(f, A.Once)
        if f.bound is None:
            return self._register(Register(Past.ONCE if once else Past.HISTORICALLY, op))
        if f.bound < 0:  # an empty window (only from the Python API), as the evaluator reads it
            return FALSE if once else TRUE
        # one register holding a window of ages 0..k, whatever k (monitor/windows.py)
        kind = Past.ONCE_WITHIN if once else Past.HISTORICALLY_WITHIN
        return self._register(Register(kind, op, bound=f.bound))

    def _register(self, reg: Register) -> int:
        index = self.register_ids.get(reg)
        if index is None:
            index = len(self.registers)
            self.registers.append(reg)
            self.register_ids[reg] = index
        return self.lit(PastAtom(index))

    def _past_operand(self, f: A.Formula) -> int:
        node = self.build(f, True)
        memo: dict[int, frozenset[int]] = {}
        for i in self.store.atoms_of(node, memo):
            if isinstance(self.atoms[i], (FrozenAtom, Placeholder)):
                raise Unsupported("a trace predicate or comparison under a past operator")
        return node

    # -------------------------------------------------------------- trace predicates
    def ev(self, tool: str, tests: tuple[A.Test, ...] = (), result: A.Term | None = None) -> int:
        if not isinstance(tool, str):  # a non-text value substituted into a tool position
            return FALSE  # names no tool (`NotATool`): no call is it, as offline
        self._check_tests(tests)
        if result is not None and free_variables(result) - ({self.var} if self.var else set()):
            raise Unsupported("a result on an unbound variable")
        return self.lit(EventAtom(tool, tests, result))

    def at_least(self, tool: str, k: int) -> int:
        s = self.store
        if k <= 0:
            return TRUE
        if k > MAX_COUNT + 1:
            raise Unsupported(f"a count above {MAX_COUNT}")
        # "at least k": the *first* occurrence, then k-1 after it. ``!t U (t & X φ)`` and
        # ``F(t & X φ)`` agree (a later t has fewer after it), but the first form progresses
        # deterministically: its residual stays one element, so a count of 36 builds 38
        # small states instead of DNFs of dozens of cubes.
        et = self.ev(tool)
        out = s.eventually(et)
        for _ in range(k - 1):
            out = s.until(s.neg(et), s.and_((et, s.next_(out, True))))
        return out

    def before(self, a: str, b: str) -> int:
        s = self.store
        ea, eb = self.ev(a), self.ev(b)
        goal = s.and_((ea, s.neg(eb), s.next_(s.eventually(eb), True)))
        return s.until(s.and_((s.neg(ea), s.neg(eb))), goal)

    def instance_before(self, a: str, n: int, b: str, m: int) -> int:
        s = self.store
        if n < 0 or m < 0:
            return FALSE
        if n + m > MAX_COUNT:
            raise Unsupported(f"instances above {MAX_COUNT}")
        if a == b:
            return self.at_least(a, m + 1) if n < m else FALSE
        ea, eb = self.ev(a), self.ev(b)
        memo: dict[tuple[int, int], int] = {}

        def q(i: int, j: int) -> int:
            key = (i, j)
            if key in memo:
                return memo[key]
            on_a = (
                s.next_(self.at_least(b, m + 1 - j), True) if i == n else s.next_(q(i + 1, j), True)
            )
            on_b = FALSE if j == m else s.next_(q(i, j + 1), True)
            goal = s.or_((s.and_((ea, on_a)), s.and_((eb, on_b))))
            out = s.until(s.and_((s.neg(ea), s.neg(eb))), goal)
            memo[key] = out
            return out

        return q(0, 0)

    def in_order(self, tools: tuple[str, ...]) -> int:
        s = self.store
        if not tools:
            return TRUE
        out = s.eventually(self.ev(tools[-1]))
        for t in reversed(tools[:-1]):  # first occurrence of t, then the rest (as at_least)
            et = self.ev(t)
            out = s.until(s.neg(et), s.and_((et, s.next_(out, True))))
        return out

    def anchored(self, p: A.TracePredicate) -> int:
        """The predicate as an LTLf formula evaluated at position 0."""
        s = self.store
        name, args = p.name, p.args
        if name == "Called":
            return s.eventually(self.ev(args[0]))
        if name == "CalledN":
            tool, n, op = args[0], int(args[1]), args[2]
            if op == "=":
                return s.and_((self.at_least(tool, n), s.neg(self.at_least(tool, n + 1))))
            if op == ">=":
                return self.at_least(tool, n)
            if op == "<=":
                return s.neg(self.at_least(tool, n + 1))
            if op == ">":
                return self.at_least(tool, n + 1)
            return s.neg(self.at_least(tool, n))
        if name == "Before":
            return self.before(args[0], args[1])
        if name == "After":
            return self.before(args[1], args[0])
        if name == "AllBefore":
            if not args[0]:  # vacuously true, as offline (∀ over an empty list)
                return TRUE
            return s.and_(self.before(t, args[1]) for t in args[0])
        if name == "InstanceBefore":
            return self.instance_before(args[0], int(args[1]), args[2], int(args[3]))
        if name == "InOrder":
            return self.in_order(tuple(args[0]))
        if name == "WithinSteps":
            a, b, k = args[0], args[1], int(args[2])
            if k < 0:
                return FALSE
            ea = self.ev(a)
            return s.until(s.neg(ea), s.and_((ea, s.eventually(self.ev(b), k))))
        if name in ("CalledWith", "CalledWithResult"):
            amap = (
                args[1]
                if name == "CalledWith"
                else (args[2] if len(args) > 2 else A.MapLiteral(()))
            )
            if not isinstance(amap, A.MapLiteral):
                raise Unsupported("an argument map that is not a literal")
            tests = tuple(A.Test(A.FieldRef(("args", k)), "=", v) for k, v in amap.items)
            result = args[1] if name == "CalledWithResult" else None
            return s.eventually(self.ev(args[0], tests, result))
        if name == "BranchCalled":
            return s.and_((s.eventually(self.ev(args[0])), s.always(s.neg(self.ev(args[1])))))
        raise Unsupported(f"{name}(...) is evaluated at the end of the run")

    def expand(self, root: int) -> int:
        """Shannon-expand the trace predicates left under temporal operators."""
        k = len(self.placeholders)
        if not k:
            return root
        if k > MAX_SHANNON:
            raise Unsupported("too many trace predicates under temporal operators")
        s = self.store
        anchors = [self.anchored(p) for p in self.placeholders]
        ids = [self.atom(Placeholder(i)) for i in range(k)]
        branches = []
        for combo in product((True, False), repeat=k):
            body = s.substitute(root, dict(zip(ids, combo, strict=True)))
            guards = [a if on else s.neg(a) for a, on in zip(anchors, combo, strict=True)]
            branches.append(s.and_((*guards, body)))
        return s.or_(branches)


def build_machine(f: A.Formula, var: str | None, match: Matcher) -> Machine:
    b = _Builder(var)
    ne = b.atom(NonEmpty())
    root = b.expand(b.build(f, False))
    return Machine(b.store, b.atoms, b.registers, root, ne, var, match)
