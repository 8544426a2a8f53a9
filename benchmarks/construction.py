"""Monitor construction: build time and memory per spec family, before and after.

Families: the shipped specs (``specs/*.ltl``), the benchmark's generated specs (the
paper grid of ``agentguard.bench.generate``), and the conjunction family
``F t0 & … & F t(n-1)`` in one constraint, n up to 40. Each spec is built *cold*
(``Monitor(spec)``, compiled-spec cache cleared) in a child interpreter; the "before"
column runs the same cases against another checkout (``--before``, e.g. a worktree of
the main commit: ``git worktree add /tmp/before <sha>``), each case capped by
``--timeout`` seconds. Also printed: a new ``Firewall`` of an already compiled spec.

    python benchmarks/construction.py [--before /tmp/before] [--timeout 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONJUNCTS = (5, 10, 15, 20, 30, 40)


def cases() -> list[tuple[str, str, str]]:
    """(family, name, spec text) of every case."""
    from agentguard.bench.generate import generate_suite, instance_spec_text

    out = [("shipped", p.name, p.read_text()) for p in sorted((ROOT / "specs").glob("*.ltl"))]
    out += [("bench", i.id, instance_spec_text(i)) for i in generate_suite()]
    for n in CONJUNCTS:
        text = "constraint c := " + " & ".join(f"F t{i}" for i in range(n)) + "\n"
        out.append(("conjunction", f"n={n}", text))
    return out


class _Timeout(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _Timeout


def _cold() -> None:
    try:
        from agentguard.monitor.compiled import clear_cache
    except ImportError:  # before the compiled-spec cache: every build is cold
        return
    clear_cache()


def child(path: str, timeout: float) -> None:
    """Measure every case of the JSON file ``path``; print one JSON line per case."""
    from agentguard.language import parse_spec
    from agentguard.monitor import Monitor

    signal.signal(signal.SIGALRM, _alarm)
    for family, name, text in json.loads(Path(path).read_text()):
        spec = parse_spec(text)
        row: dict[str, Any] = {"family": family, "name": name}
        _cold()
        signal.setitimer(signal.ITIMER_REAL, timeout)
        start = time.perf_counter()
        try:
            Monitor(spec)
            row["seconds"] = time.perf_counter() - start
        except _Timeout:
            row["seconds"] = None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if row["seconds"] is not None and row["seconds"] < timeout / 2:
            _cold()
            tracemalloc.start()
            Monitor(spec)
            row["peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
        print(json.dumps(row), flush=True)


def firewall_from_compiled() -> float:
    """Seconds for a new Firewall of a spec already compiled (20 conjuncts)."""
    from agentguard.enforcement.firewall import Firewall
    from agentguard.language import parse_spec

    spec = parse_spec("constraint c := " + " & ".join(f"F t{i}" for i in range(20)) + "\n")
    Firewall(spec)
    runs = 200
    start = time.perf_counter()
    for _ in range(runs):
        Firewall(spec)
    return (time.perf_counter() - start) / runs


def run(checkout: Path, data: Path, timeout: float) -> list[dict[str, Any]]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import construction; "
        f"construction.child({str(data)!r}, {timeout!r})"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=checkout, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def summary(rows: list[dict[str, Any]], timeout: float) -> dict[str, dict[str, Any]]:
    """Per family (and per conjunction size): total and worst seconds, worst peak MB."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        keys = [r["family"]] + (
            [f"conjunction {r['name']}"] if r["family"] == "conjunction" else []
        )
        for key in keys:
            s = out.setdefault(key, {"cases": 0, "total": 0.0, "worst": 0.0, "peak_mb": None})
            secs = timeout if r["seconds"] is None else r["seconds"]
            s["cases"] += 1
            s["total"] += secs
            s["worst"] = max(s["worst"], secs)
            s["timeouts"] = s.get("timeouts", 0) + (r["seconds"] is None)
            if "peak_mb" in r:  # not measured on a case that took over half the cap
                s["peak_mb"] = max(s["peak_mb"] or 0.0, r["peak_mb"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, help="a checkout to compare with (e.g. main)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per case")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(cases(), fh)
    data = Path(fh.name)
    after = summary(run(ROOT, data, args.timeout), args.timeout)
    before = summary(run(args.before, data, args.timeout), args.timeout) if args.before else {}
    data.unlink()
    fw = firewall_from_compiled()
    if args.json:
        print(json.dumps({"after": after, "before": before, "firewall_from_compiled_s": fw}))
        return

    def cell(s: dict[str, Any] | None, field: str) -> str:
        if s is None or s[field] is None:
            return "-"
        v = s[field]
        text = f"{v:.3f}" if field != "peak_mb" else f"{v:.1f}"
        return (">" if field != "peak_mb" and s.get("timeouts") else "") + text

    print(
        f"{'family':<18} {'cases':>5} {'worst s':>9} {'total s':>9} {'peak MB':>8}"
        f" {'before worst':>13} {'before total':>13} {'before MB':>10} {'ratio':>7}"
    )
    for key, s in after.items():
        b = before.get(key)
        ratio = f"{b['total'] / s['total']:.0f}x" if b and s["total"] else "-"
        print(
            f"{key:<18} {s['cases']:>5} {cell(s, 'worst'):>9} {cell(s, 'total'):>9}"
            f" {cell(s, 'peak_mb'):>8} {cell(b, 'worst'):>13} {cell(b, 'total'):>13}"
            f" {cell(b, 'peak_mb'):>10} {ratio:>7}"
        )
    print(f"new Firewall of a compiled spec (20 conjuncts): {fw * 1e3:.3f} ms")
    if before:
        print(
            f"('>' = at least one case hit the {args.timeout:.0f} s cap; ratios are then lower bounds)"
        )


if __name__ == "__main__":
    main()
