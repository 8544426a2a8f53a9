"""A ``start`` that may wait, awaited from an event loop without taking a pool's thread.

A call of a parallel batch whose approval relied on a sibling still in flight waits in
``Firewall.start`` (a blocking wait, up to ``start_timeout``) for the sibling to finish.
Awaited through the loop's default executor (``asyncio.to_thread``,
``run_in_executor(None, ...)``), each waiting start holds one of its few threads
(``min(32, cpus + 4)``); once they all wait, the siblings they wait for cannot run their
synchronous bodies, which the frameworks run on that same executor, and everything
stalls until the timeout refuses the waiting calls. So each waiting start gets a thread
of its own: a batch is bounded by what the model asked for in one turn, and a start that
need not wait never comes here (the adapters start those on the loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

from agentguard.enforcement.decision import Decision


def waiting_start(
    start: Callable[[Decision], Decision], decision: Decision
) -> asyncio.Future[Decision]:
    """``start(decision)`` run on a thread of its own; its outcome as a future of the
    running loop (not cancelled by a cancelled awaiter that shields it: the start's
    outcome still arrives, for the caller to undo)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Decision] = loop.create_future()

    def settle(outcome: Decision | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        elif outcome is not None:
            future.set_result(outcome)

    def work() -> None:
        outcome: Decision | None = None
        error: BaseException | None = None
        try:
            outcome = start(decision)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiter, raised there
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
            loop.call_soon_threadsafe(settle, outcome, error)

    threading.Thread(target=work, name="agentguard-waiting-start", daemon=True).start()
    return future


__all__ = ["waiting_start"]
