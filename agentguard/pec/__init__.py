"""Prefix executability: how long a run stayed executable, where it first broke, and recovery.

Episodes (:mod:`.episode`, :mod:`.loaders`) are judged call by call by an
:class:`~agentguard.pec.oracle.Oracle` (schema -> dependency -> precondition ->
state-consistency -> information; the first three by the firewall's tool checker over
the language's tool declarations, loaded by :mod:`.declarations`), giving FED and one primary failure label per
episode; :mod:`.metrics` computes PEC(k), n_k, PEC_elig(k), TER, AUC-PEC, mean FED,
RR and the Eq. 12 decomposition; :mod:`.stats` the paired task bootstrap and
Wilson intervals; :mod:`.report` and :mod:`.cli` the tables, :mod:`.export` the
per-episode lines. Benchmark adapters, none imported here: BFCL-v3 in
:mod:`agentguard.pec.bfcl` and its result/score files in :mod:`.bfcl_files` (extra
``[bfcl]``), tau2 domains in :mod:`.tau2_env` (extra ``[tau2]``), ToolSandbox scenarios
in :mod:`.toolsandbox_env` (ToolSandbox's own environment, reached across a process
boundary by :mod:`.toolsandbox_worker`) with its run files in :mod:`.toolsandbox_files`
and the paper's sample in :mod:`.toolsandbox_sample`; tau-bench and tau2 result files are
read by :mod:`.tau_files`; the plot is :mod:`agentguard.pec.plot`
(extra ``[plot]``).
"""

from agentguard.pec.declarations import (
    ToolDecls,
    declarations_from_json_schema,
    declarations_from_params,
    declarations_from_spec,
)
from agentguard.pec.environment import Environment, Execution, is_error_result
from agentguard.pec.episode import NO_TOOL, Episode, Scored, episode_from_trace
from agentguard.pec.errors import PecError, ReplayError
from agentguard.pec.labels import LABEL_ORDER, Failure, FailureLabel
from agentguard.pec.loaders import LoadedEpisode, episode_from_json, load_episodes
from agentguard.pec.metrics import EpisodeArrays, Summary, summarize
from agentguard.pec.oracle import CallContext, Check, Oracle, Replay
from agentguard.pec.report import Report, build_report
from agentguard.pec.stats import Interval, paired_bootstrap, wilson

__all__ = [
    "LABEL_ORDER",
    "NO_TOOL",
    "CallContext",
    "Check",
    "Environment",
    "Episode",
    "EpisodeArrays",
    "Execution",
    "Failure",
    "FailureLabel",
    "Interval",
    "LoadedEpisode",
    "Oracle",
    "PecError",
    "Replay",
    "ReplayError",
    "Report",
    "Scored",
    "Summary",
    "ToolDecls",
    "build_report",
    "declarations_from_json_schema",
    "declarations_from_params",
    "declarations_from_spec",
    "episode_from_json",
    "episode_from_trace",
    "is_error_result",
    "load_episodes",
    "paired_bootstrap",
    "summarize",
    "wilson",
]
