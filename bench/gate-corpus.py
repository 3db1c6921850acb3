#!/usr/bin/env python3
"""Run `repromin run` with no configuration on the cases of bench/gate-corpus.json.

Usage:
    bench/gate-corpus.py MIRRORS REPROMIN [FILTER ...] [--timeout S] [--work DIR] [--keep]
                         [--corpus FILE] [--lines DIR]

MIRRORS is a folder holding one git repository per corpus repository, named
OWNER+NAME after the case's `repo` (`tkem/cachetools` -> `MIRRORS/tkem+cachetools`).
Each entry may be a bare repository, a clone with a work tree, or a folder holding
either as `repo` (`MIRRORS/tkem+cachetools/repo`, the layout of a mirror directory).
Only the commits of the cases are needed. Nothing is written into MIRRORS.

REPROMIN is the binary to test. FILTER arguments keep a case when one of them is a
substring of its id, or equals its language, framework or expected verdict
(`gomd`, `python`, `jest`, `vacuous`). No filter runs every case.

Each case runs in a fresh clone under --work (default: a new temporary folder),
checked out at the head, as

    timeout S nice -n 10 REPROMIN run --no-reduce --base MERGE_BASE --head HEAD

with no repository configuration and no --config; REPROMIN_*, GITHUB_* and CI are
removed from the environment. Cases run one at a time. The table goes to stdout as
Markdown, one row per case as soon as it ends: id, expected, got, seconds, and the
line's `error` field when the verdict is `error`. Each case's stderr is kept in
WORK/ID.log. With --lines DIR, each case's whole `repromin/v1` line, as printed
(with its newline), is written to DIR/ID.line; a case that prints no line leaves no
file there (an older one is removed). Two such folders, from two binaries, compare
byte for byte with `diff -r DIR1 DIR2`. The exit status is 0 when every case got
its expected verdict, 1 otherwise, 2 on bad usage.
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
            ["git", "-C", str(cand), "rev-parse", "--git-dir"],
            capture_output=True,
        ).returncode == 0:
            return cand
    return None


def keep(case: dict, filters: list[str]) -> bool:
    if not filters:
        return True
    for f in filters:
        if f in case["id"] or f in (case["language"], case["framework"], case["expected_verdict"]):
            return True
    return False


def clean_env() -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not (k.startswith("REPROMIN_") or k.startswith("GITHUB_") or k == "CI")
    }
    return env


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def save_line(path: Path, stdout: bytes):
    """Writes the first `repromin/v1` line of stdout to path, bytes as printed."""
    for line in stdout.splitlines(keepends=True):
        if line.startswith(b"repromin/v1 "):
            path.write_bytes(line)
            return


def run_case(
    case: dict, source: Path, repromin: str, work: Path, timeout: int, keep_clone: bool,
    lines: Path | None,
):
    clone = work / case["id"]
    if clone.exists():
        shutil.rmtree(clone)
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(source), str(clone)], check=True)
    for sha in (case["merge_base"], case["head"]):
        if subprocess.run(
            ["git", "-C", str(clone), "cat-file", "-e", sha + "^{commit}"], capture_output=True
        ).returncode:
            return "missing", 0.0, f"commit {sha} is not in {source}"
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", case["head"]], check=True)
    cmd = [
        "timeout", str(timeout), "nice", "-n", "10", repromin, "run", "--no-reduce",
        "--base", case["merge_base"], "--head", case["head"],
    ]
    start = time.monotonic()
    with open(work / f"{case['id']}.log", "wb") as log:
        proc = subprocess.run(cmd, cwd=clone, env=clean_env(), stdout=subprocess.PIPE, stderr=log)
    secs = time.monotonic() - start
    if lines is not None:
        save_line(lines / f"{case['id']}.line", proc.stdout)
    if not keep_clone:
        shutil.rmtree(clone, ignore_errors=True)
    if proc.returncode == 124:
        return "timeout", secs, f"no line after {timeout} s"
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("repromin/v1 "):
            try:
                obj = json.loads(line[len("repromin/v1 "):])
            except json.JSONDecodeError as e:
                return "bad-line", secs, str(e)
            return obj.get("verdict", "?"), secs, obj.get("error") or ""
    return "no-line", secs, f"exit {proc.returncode}, no repromin/v1 line on stdout"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("repromin")
    ap.add_argument("filters", nargs="*")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per case (default 1200)")
    ap.add_argument("--work", type=Path, help="folder for clones and logs (default: a new temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep each case's clone")
    ap.add_argument("--corpus", type=Path, default=HERE / "gate-corpus.json")
    ap.add_argument("--lines", type=Path, help="write each case's repromin/v1 line to DIR/ID.line")
    args = ap.parse_args()

    if not args.mirrors.is_dir():
        print(f"gate-corpus: {args.mirrors} is not a folder", file=sys.stderr)
        return 2
    repromin = shutil.which(args.repromin) or args.repromin
    if not (os.path.isfile(repromin) and os.access(repromin, os.X_OK)):
        print(f"gate-corpus: {args.repromin} is not an executable file", file=sys.stderr)
        return 2
    repromin = os.path.abspath(repromin)
    cases = [c for c in json.loads(args.corpus.read_text())["cases"] if keep(c, args.filters)]
    if not cases:
        print("gate-corpus: no case matches the filter", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="gate-corpus-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"<!-- logs: {work} -->", file=sys.stderr)
    if args.lines is not None:
        args.lines.mkdir(parents=True, exist_ok=True)

    print("| case | expected | got | seconds | error |")
    print("| --- | --- | --- | ---: | --- |", flush=True)
    right = 0
    for case in cases:
        if args.lines is not None:
            (args.lines / f"{case['id']}.line").unlink(missing_ok=True)
        source = find_source(args.mirrors, case["repo"])
        if source is None:
            got, secs, err = "missing", 0.0, f"no repository for {case['repo']} in {args.mirrors}"
        else:
            got, secs, err = run_case(
                case, source, repromin, work, args.timeout, args.keep, args.lines
            )
        ok = got == case["expected_verdict"]
        right += ok
        shown = got if ok else f"**{got}**"
        print(f"| {case['id']} | {case['expected_verdict']} | {shown} | {secs:.0f} | {one_line(err)} |", flush=True)
    print(f"\n{right} of {len(cases)} cases got the expected verdict.", flush=True)
    return 0 if right == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
