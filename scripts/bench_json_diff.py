#!/usr/bin/env python3
"""Benchmark the text diffs of `smuves_sync.json_diff`: what difflib costs on adversarial
lines, and what `diff_documents` costs at its bounds (`MAX_DIFF_LINES`, `MAX_DIFF_CHARS`).

difflib's matcher is fast on ordinary edits but grows faster than the square of the lines it
compares when lines repeat just too rarely for its autojunk rule (each under 1% of the lines,
so none is set aside) and matches are short. The families below are the worst found: for each
number of lines a side, the slowest of them is printed. Then `diff_documents` at its bounds:
the worst family filling the whole line budget, the budget spread over many fields, one line
of the whole character budget, and two 1 MB bodies (past the bound: no line diff, only the
field's change).

    python scripts/bench_json_diff.py                 # 500, 1,000, 1,500 and 2,000 lines
    python scripts/bench_json_diff.py --lines 3000    # other sizes
"""

from __future__ import annotations

import argparse
import difflib
import random
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from smuves_sync.json_diff import MAX_DIFF_CHARS, MAX_DIFF_LINES, diff_documents

Pair = tuple[list[str], list[str]]


def families(lines: int) -> Iterator[tuple[str, Pair]]:
    """Adversarial pairs of `lines` lines each, by name."""
    rng = random.Random(7)
    just_kept = max(2, lines // (lines // 100 + 1))  # each line repeats just under 1%
    for period in sorted({just_kept, just_kept + 1, 100, 150, lines}):
        base = [f"<p>{i % period}</p>" for i in range(lines)]
        yield (
            f"period {period}, every other changed",
            (
                base,
                [x if i % 2 else x.replace("</p>", "!</p>") for i, x in enumerate(base)],
            ),
        )
        yield (
            f"period {period}, every third replaced",
            (
                base,
                [x if i % 3 else "<br>" for i, x in enumerate(base)],
            ),
        )
        shuffled = base[:]
        rng.shuffle(shuffled)
        yield f"period {period}, shuffled", (base, shuffled)
    yield "one line repeated", (["<br>"] * lines, ["<br>"] * (lines - 1) + ["<hr>"])


def seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def unified(pair: Pair) -> list[str]:
    return list(difflib.unified_diff(*pair, lineterm="", n=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, nargs="*", default=[500, 1000, 1500, 2000])
    args = parser.parse_args()

    print("difflib alone, the slowest family per size")
    for lines in args.lines:
        worst = max((seconds(partial(unified, pair)), name) for name, pair in families(lines))
        print(f"  {lines:>6,} lines a side  {worst[0]:7.3f} s  ({worst[1]})")

    half = MAX_DIFF_LINES // 2
    name, (old, new) = max(
        ((seconds(partial(unified, pair)), (n, pair)) for n, pair in families(half))
    )[1]
    fields = half // 20  # of 20 lines each: long enough to be diffed as text
    many_old = {f"f{i}": "".join(old[i * 20 : i * 20 + 20]) for i in range(fields)}
    many_new = {f"f{i}": "".join(new[i * 20 : i * 20 + 20]) for i in range(fields)}
    one_line = "x" * (MAX_DIFF_CHARS // 2)
    megabyte = "<p>a</p>" * 131_072
    cases: list[tuple[str, object, object]] = [
        (f"one field, the whole line budget ({name})", {"b": "".join(old)}, {"b": "".join(new)}),
        (f"{fields} fields sharing the line budget", many_old, many_new),
        ("one line of the whole character budget", {"b": one_line}, {"b": one_line + "y"}),
        ("two 1 MB bodies (past the bound)", {"b": megabyte}, {"b": megabyte + "<p>b</p>"}),
    ]
    print(f"diff_documents at its bounds ({MAX_DIFF_LINES:,} lines, {MAX_DIFF_CHARS:,} chars)")
    for label, before, after in cases:
        took = seconds(partial(diff_documents, before, after))
        print(f"  {took:7.3f} s  {label}")


if __name__ == "__main__":
    main()
