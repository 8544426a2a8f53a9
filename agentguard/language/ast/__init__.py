"""The AgentLTL syntax tree: frozen, slotted, behaviour-free dataclasses.

Three layers, one module each:

* **Terms** (:mod:`.terms`, :data:`Term`): constants, variables, field references, domains.
* **Formulas** (:mod:`.formulas`, :data:`Formula`): what evaluation, monitoring and
  printing work on. Every name here is resolved: a tool atom is an :class:`Event`, a trace
  predicate is a :class:`TracePredicate`, a user predicate a :class:`UserPredicate`.
* **Spec items** (:mod:`.items`: :class:`Spec`, :class:`Constraint`, :class:`ToolDecl`, ...).

Spans are kept for error messages but never compared, so a printed-and-reparsed
tree equals the original. Import the nodes from here (``from agentguard.language import
ast as A``); the sub-modules are the layout, not the interface.
"""

from agentguard.language.ast.formulas import (
    OUTCOMES as OUTCOMES,
)
from agentguard.language.ast.formulas import (
    TRACE_PREDICATES as TRACE_PREDICATES,
)
from agentguard.language.ast.formulas import (
    Always as Always,
)
from agentguard.language.ast.formulas import (
    And as And,
)
from agentguard.language.ast.formulas import (
    Compare as Compare,
)
from agentguard.language.ast.formulas import (
    Const as Const,
)
from agentguard.language.ast.formulas import (
    Event as Event,
)
from agentguard.language.ast.formulas import (
    Eventually as Eventually,
)
from agentguard.language.ast.formulas import (
    Formula as Formula,
)
from agentguard.language.ast.formulas import (
    Historically as Historically,
)
from agentguard.language.ast.formulas import (
    Iff as Iff,
)
from agentguard.language.ast.formulas import (
    Implies as Implies,
)
from agentguard.language.ast.formulas import (
    Next as Next,
)
from agentguard.language.ast.formulas import (
    Not as Not,
)
from agentguard.language.ast.formulas import (
    Once as Once,
)
from agentguard.language.ast.formulas import (
    Or as Or,
)
from agentguard.language.ast.formulas import (
    Quantified as Quantified,
)
from agentguard.language.ast.formulas import (
    Release as Release,
)
from agentguard.language.ast.formulas import (
    Since as Since,
)
from agentguard.language.ast.formulas import (
    Test as Test,
)
from agentguard.language.ast.formulas import (
    TracePredicate as TracePredicate,
)
from agentguard.language.ast.formulas import (
    Until as Until,
)
from agentguard.language.ast.formulas import (
    UserPredicate as UserPredicate,
)
from agentguard.language.ast.formulas import (
    WeakUntil as WeakUntil,
)
from agentguard.language.ast.formulas import (
    Yesterday as Yesterday,
)
from agentguard.language.ast.items import (
    PARAM_TYPE_ALIASES as PARAM_TYPE_ALIASES,
)
from agentguard.language.ast.items import (
    PARAM_TYPES as PARAM_TYPES,
)
from agentguard.language.ast.items import (
    RESULT_FORMATS as RESULT_FORMATS,
)
from agentguard.language.ast.items import (
    Constraint as Constraint,
)
from agentguard.language.ast.items import (
    Param as Param,
)
from agentguard.language.ast.items import (
    Spec as Spec,
)
from agentguard.language.ast.items import (
    ToolDecl as ToolDecl,
)
from agentguard.language.ast.items import (
    TrustDecl as TrustDecl,
)
from agentguard.language.ast.terms import (
    COMPARISON_OPS as COMPARISON_OPS,
)
from agentguard.language.ast.terms import (
    MATCHES as MATCHES,
)
from agentguard.language.ast.terms import (
    PROVENANCE_FIELD as PROVENANCE_FIELD,
)
from agentguard.language.ast.terms import (
    PROVENANCE_OPS as PROVENANCE_OPS,
)
from agentguard.language.ast.terms import (
    SOURCE_KINDS as SOURCE_KINDS,
)
from agentguard.language.ast.terms import (
    STAR as STAR,
)
from agentguard.language.ast.terms import (
    Domain as Domain,
)
from agentguard.language.ast.terms import (
    FieldRef as FieldRef,
)
from agentguard.language.ast.terms import (
    ListLiteral as ListLiteral,
)
from agentguard.language.ast.terms import (
    Literal as Literal,
)
from agentguard.language.ast.terms import (
    MapLiteral as MapLiteral,
)
from agentguard.language.ast.terms import (
    MetricRef as MetricRef,
)
from agentguard.language.ast.terms import (
    Regex as Regex,
)
from agentguard.language.ast.terms import (
    Source as Source,
)
from agentguard.language.ast.terms import (
    SourcePart as SourcePart,
)
from agentguard.language.ast.terms import (
    Span as Span,
)
from agentguard.language.ast.terms import (
    Term as Term,
)
from agentguard.language.ast.terms import (
    Var as Var,
)
from agentguard.language.ast.terms import (
    is_matches as is_matches,
)
from agentguard.language.ast.terms import (
    literal_identity as literal_identity,
)
from agentguard.language.ast.terms import (
    matches_regex as matches_regex,
)
from agentguard.language.ast.terms import (
    matches_step as matches_step,
)
