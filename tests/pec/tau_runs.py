"""tau-bench result items for the tests, and the tau2 builders re-exported.

tau-bench is not installed here, so its files are written in the ``EnvRunResult``
shape (``{task_id, reward, info, traj, trial}``, OpenAI-style ``traj``) by hand; tau2
files are built by tau2 itself (:mod:`agentguard.testing.tau2_runs`).
"""

from __future__ import annotations

from typing import Any

from agentguard.pec.tau2_env import quiet_tau2
from agentguard.testing.tau2_runs import tau2_results, tau2_simulation, write_json

quiet_tau2()  # tau2 logs every tool response at DEBUG level

__all__ = ["tau2_results", "tau2_simulation", "tau_bench_item", "write_json"]


def tau_bench_item(task_id: int, trial: int, reward: float) -> dict[str, Any]:
    """One ``EnvRunResult`` of a retail run: a lookup, a failing call, an answer."""
    traj = [
        {"role": "system", "content": "# Retail agent policy ..."},
        {"role": "user", "content": "Hi, I want to return my order #W2378156."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a1",
                    "type": "function",
                    "function": {
                        "name": "find_user_id_by_email",
                        "arguments": '{"email": "yusuf.rossi@example.com"}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_a1",
            "name": "find_user_id_by_email",
            "content": "yusuf_rossi_9620",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_a2",
                    "type": "function",
                    "function": {
                        "name": "get_order_details",
                        "arguments": '{"order_id": "W2378156"}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_a2",
            "name": "get_order_details",
            "content": "Error: order not found",
        },
        {"role": "assistant", "content": "Your return has been started."},
    ]
    info = {"task": {"user_id": "yusuf_rossi_9620", "actions": []}, "source": "user"}
    return {"task_id": task_id, "reward": reward, "info": info, "traj": traj, "trial": trial}
