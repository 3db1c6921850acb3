#!/usr/bin/env python3
"""Time the reduce side of the gate on the reproduced cases of a gate-case file, for one or
more repromin binaries side by side.

Usage:
    bench/gate-reduce.py MIRRORS NAME=REPROMIN [NAME=REPROMIN ...] [--cases FILE]
                         [--only ID,...] [--budget-ms N] [--work DIR] [--trace]

MIRRORS holds one git repository per case repository, named OWNER+NAME (as for
bench/gate-corpus.py). --cases is a JSON list of cases with `id`, `repo`, `merge_base`,
`head` and `expected_verdict`, or an object with that list under `cases` as
bench/gate-corpus.json (default: ../shared/eval/gate-cases.json beside the repository); only the cases expected `reproduced` run. For each case and each binary, in
the order given, in a fresh clone checked out at the head, with no configuration:

    REPROMIN exec --side base   --out D --base B --head H
    REPROMIN exec --side head   --out D --base B --head H
    REPROMIN exec --side reduce --out D --base-report D/base.report --head-report D/head.report --base B --head H
    REPROMIN judge --base-report ... --head-report ... --reduce-report ... --base B --head H

The reduce side's wall time is the third command's. The table (Markdown, one row per case
and binary as soon as it ends) gives the certificate's verdict, the files and bytes before
and after, the holdout, the reduce side's seconds and its commands (from
reduce-phases.json). REPROMIN_*, GITHUB_* and CI are removed from the environment.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def find_source(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo", base):
        if cand.is_dir() and subprocess.run(
            ["git", "-C", str(cand), "rev-parse", "--git-dir"], capture_output=True
        ).returncode == 0:
            return cand
    return None


def clean_env() -> dict:
    return {
        k: v
        for k, v in os.environ.items()
        if not (k.startswith("REPROMIN_") or k.startswith("GITHUB_") or k == "CI")
    }


def run_case(case, source, name, repromin, work, budget_ms, trace):
    clone = work / f"{case['id']}-{name}"
    out = work / f"{case['id']}-{name}.reports"
    for p in (clone, out):
        if p.exists():
            shutil.rmtree(p)
    out.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(source), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", case["head"]], check=True)
    shas = ["--base", case["merge_base"], "--head", case["head"]]
    env = clean_env()
    log = open(work / f"{case['id']}-{name}.log", "wb")

    def go(args, env=env):
        start = time.monotonic()
        proc = subprocess.run([repromin, *args], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=log)
        return proc, time.monotonic() - start

    go(["exec", "--side", "base", "--out", str(out), *shas])
    go(["exec", "--side", "head", "--out", str(out), *shas])
    reduce_args = ["exec", "--side", "reduce", "--out", str(out), "--base-report", str(out / "base.report"), "--head-report", str(out / "head.report"), *shas]
    if budget_ms:
        reduce_args += ["--budget-ms", str(budget_ms)]
    reduce_env = dict(env)
    if trace:
        # Every candidate of the reduce side, as docs/reduce.md describes REPROMIN_TRACE.
        reduce_env["REPROMIN_TRACE"] = str(work / f"{case['id']}-{name}.trace.tsv")
        Path(reduce_env["REPROMIN_TRACE"]).unlink(missing_ok=True)
    _, secs = go(reduce_args, reduce_env)
    judge = [
        "judge",
        "--base-report", str(out / "base.report"),
        "--base-rerun-report", str(out / "base-rerun.report"),
        "--head-report", str(out / "head.report"),
        "--reduce-report", str(out / "reduce.report"),
        *shas,
    ]
    proc, _ = go(judge)
    log.close()
    shutil.rmtree(clone, ignore_errors=True)
    cert = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("repromin/v1 "):
            cert = json.loads(line[len("repromin/v1 "):]).get("certificate") or {}
    commands = ""
    phases = out / "reduce-phases.json"
    if phases.is_file():
        commands = str(sum(p.get("oracle_samples", 0) for p in json.loads(phases.read_text())))
    return cert, secs, commands


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("binaries", nargs="+", help="NAME=PATH of a repromin binary")
    ap.add_argument("--cases", type=Path, default=HERE.parent.parent / "shared" / "eval" / "gate-cases.json")
    ap.add_argument("--only", default="", help="comma-separated case ids, run in this order")
    ap.add_argument("--budget-ms", type=int, default=0, help="the reduce side's --budget-ms (default: its own)")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--trace", action="store_true", help="write each reduce side's REPROMIN_TRACE to WORK/ID-NAME.trace.tsv")
    args = ap.parse_args()
    binaries = []
    for spec in args.binaries:
        name, sep, path = spec.partition("=")
        path = shutil.which(path) or path
        if not sep or not (os.path.isfile(path) and os.access(path, os.X_OK)):
            print(f"gate-reduce: {spec} is not NAME=EXECUTABLE", file=sys.stderr)
            return 2
        binaries.append((name, os.path.abspath(path)))
    only = [x for x in args.only.split(",") if x]
    listed = json.loads(args.cases.read_text())
    if isinstance(listed, dict):
        # bench/gate-corpus.json keeps its list under "cases".
        listed = listed.get("cases", [])
    cases = [
        c for c in listed
        if c.get("expected_verdict") == "reproduced" and (not only or c["id"] in only)
    ]
    if only:
        # In the order --only lists them.
        cases.sort(key=lambda c: only.index(c["id"]))
    if not cases:
        print("gate-reduce: no reproduced case matches", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="gate-reduce-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"<!-- logs: {work} -->", file=sys.stderr)
    print("| case | binary | certificate | before | after | holdout | reduce side s | commands |")
    print("| --- | --- | --- | --- | --- | --- | ---: | ---: |", flush=True)
    for case in cases:
        source = find_source(args.mirrors, case["repo"])
        if source is None:
            print(f"| {case['id']} | - | no repository for {case['repo']} | | | | | |", flush=True)
            continue
        for name, path in binaries:
            cert, secs, commands = run_case(case, source, name, path, work, args.budget_ms, args.trace)

            def size(k):
                v = cert.get(k) or {}
                return f"{v.get('files', '?')} files, {v.get('bytes', '?')} B" if v else "-"

            h = cert.get("holdout") or {}
            holdout = f"{h.get('passes')}/{h.get('runs')}" if h else "-"
            verdict = cert.get("verdict", "none")
            if cert.get("error"):
                verdict += f" ({' '.join(str(cert['error']).split())[:80]})"
            print(
                f"| {case['id']} | {name} | {verdict} | {size('before')} | {size('after')} | {holdout} | {secs:.0f} | {commands} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
