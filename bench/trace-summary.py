#!/usr/bin/env python3
"""Where the commands of a reduction went, from its REPROMIN_TRACE file.

Usage:
    bench/trace-summary.py TRACE [--jobs N] [TRACE ...]

For each trace (see docs/reduce.md, "REPROMIN_TRACE"), prints one Markdown row: the
commands run (candidates and runs ahead; cache hits and cuts answered from memory run
nothing), how many of them were new cuts and how many cuts that had failed before (run
again because a name they hold lost a use, or in a confirming round), how many of each
passed, and the worker slots that windows left idle at N jobs (a window whose commands,
its runs ahead included, do not fill its last round). With --by-pass, one row per pass
of each trace.
"""

import argparse
import collections
import sys
from pathlib import Path

RUN = {"pass", "fail", "ahead-pass", "ahead-fail"}


def summarise(path: Path, jobs: int):
    rows = collections.defaultdict(lambda: collections.Counter())
    windows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split("\t")
        if len(fields) < 3:
            continue
        phase, how = fields[0], fields[1]
        if how == "window":
            ran = fields[2].split()
            windows.append([int(ran[1]) if len(ran) == 2 else 0, 0])
            continue
        if how.startswith("ahead") and windows:
            windows[-1][1] += 1
        if how not in RUN:
            continue
        before = fields[3] if len(fields) >= 5 else "0"
        kind = "new" if before == "0" else "again"
        row = rows[phase]
        row[kind] += 1
        if how.endswith("pass"):
            row[kind + " passed"] += 1
    idle = sum(-(r + a) % jobs for r, a in windows if r + a)
    return rows, idle


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--by-pass", action="store_true")
    args = ap.parse_args()
    if args.jobs < 1:
        print("trace-summary: --jobs must be at least 1", file=sys.stderr)
        return 2
    print("| trace | pass | commands | new (passed) | failed before (passed) | idle slots |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for path in args.traces:
        if not path.is_file():
            print(f"trace-summary: {path}: no such file", file=sys.stderr)
            return 2
        rows, idle = summarise(path, args.jobs)
        total = collections.Counter()
        for row in rows.values():
            total.update(row)
        shown = list(rows.items()) if args.by_pass else []
        for phase, row in shown + [("all", total)]:
            print(
                f"| {path.name} | {phase} | {row['new'] + row['again']} "
                f"| {row['new']} ({row['new passed']}) | {row['again']} ({row['again passed']}) "
                f"| {idle if phase == 'all' else ''} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
