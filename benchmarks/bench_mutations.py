"""Count how many single-step mutations of gold traces the synthesized specs reject.

Run: ``python benchmarks/bench_mutations.py [--seeds 42 123 7] [--difficulties 1 2 3]``.
For every template x difficulty x seed and every mutation of
:mod:`agentguard.bench.mutations`, the mutated trace is scored on the instance's own
spec; a mutation is *detected* when it scores below 1.0. Prints detected / total per
kind, split by whether the mutation changes what the procedure determines.
"""

from __future__ import annotations

import argparse
from collections import Counter

import agentguard
from agentguard.bench.generate import generate_instance
from agentguard.bench.mutations import MUTATION_KINDS, mutations
from agentguard.bench.templates import TEMPLATE_NAMES
from agentguard.trace.model import Trace


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[42, 123, 7])
    parser.add_argument("--difficulties", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--show", type=int, default=0, help="print N undetected examples")
    args = parser.parse_args()

    total: Counter[tuple[str, bool]] = Counter()
    detected: Counter[tuple[str, bool]] = Counter()
    missed: list[str] = []
    for template in TEMPLATE_NAMES:
        for difficulty in args.difficulties:
            for seed in args.seeds:
                inst = generate_instance(template, difficulty, seed)
                spec = agentguard.parse_spec(inst.spec_text)
                for m in mutations(inst):
                    key = (m.kind, m.changes_procedure)
                    total[key] += 1
                    score = agentguard.verify_trace(Trace.from_records(list(m.records)), spec).score
                    if score < 1.0:
                        detected[key] += 1
                    elif m.changes_procedure:
                        missed.append(f"{inst.id}: {m.description}")
    print(f"{'mutation':<22} {'changes procedure':>18} {'detected':>9} {'total':>6}")
    for kind in MUTATION_KINDS:
        for changes in (True, False):
            if total[(kind, changes)]:
                print(
                    f"{kind:<22} {'yes' if changes else 'no':>18} "
                    f"{detected[(kind, changes)]:>9} {total[(kind, changes)]:>6}"
                )
    for line in missed[: args.show]:
        print("missed:", line)


if __name__ == "__main__":
    main()
