#!/usr/bin/env python3
"""Time `repromin run` against the bare work it must do, on the cases of bench/gate-corpus.json.

Usage:
    bench/gate-cost.py MIRRORS REPROMIN [FILTER ...] [--work DIR] [--keep] [--no-warm-up]
                       [--timeout S] [--corpus FILE]

MIRRORS, REPROMIN and FILTER are as for bench/gate-corpus.py: MIRRORS/OWNER+NAME is a bare
repository or a clone of each corpus repository (or holds one as MIRRORS/OWNER+NAME/repo),
REPROMIN the binary, and a FILTER keeps the cases whose id contains it or whose language,
framework or expected verdict it names. Nothing is written into MIRRORS.

For each case, one at a time, everything under `nice -n 10`, with REPROMIN_*, GITHUB_*
and CI removed from the environment:

1. The gate: a fresh clone, checked out at the head, runs

       REPROMIN run --no-reduce --base MERGE_BASE --head HEAD --reports WORK/ID/reports

   and its wall time is the gate's. Its stderr is kept in WORK/ID/gate.log; its
   `configuration:` line says which defaults it detected, and its kept reports which
   test files it selected (the files of its `head` and `base` reports) and how many
   reruns each side made (the `reruns` of `base-rerun.report` and `head.report`).
2. The bare work, in a second fresh clone, each step timed: a worktree of the merge
   base; the install commands the gate detected, in order; the head's version of each
   of the case's `test_files` written over it; the test command twice with the selected
   test files; then a worktree of the head, the install commands, the test command
   once. The commands are the detected defaults of docs/repo-config.md for Python, Rust
   and Go, with the placeholders filled as the gate fills them ({tests}, {report},
   {test_targets}, {packages}, {nextest_config}); each runs under `sh -c` in its
   worktree with CI=1 and a TMPDIR of its own, as the gate's do. A case whose
   configuration line is not one of those (Node, or an unrecognised Python test
   dependency source) gets a row that says so and no bare run.

The bare time is install + test + test (base) + install + test (head); the worktrees and
the overlay are shown apart (`git s`), since the gate does them too. `ratio` is gate over
bare, `gate − bare s` the difference, `reruns` the reruns of the base and the head side
as the reports count them.

By default each case starts with an untimed gate run, traced with strace (when it is on
PATH; `-f`, execve and clone only, with seccomp-bpf, so that the test commands run at
nearly full speed): it tells the configuration and the selected tests, it fills pip's,
cargo's and go's download and build caches with what both timed runs need (so neither
pays for a cold cache the other does not), and its trace tells where the gate's time
goes. Then the gate is timed, then the bare work. With --no-warm-up the first gate run is
the timed one, and the bare work, run after it, finds the caches it filled.

The table goes to stdout as Markdown, one row per case as soon as it ends. After it, a
second table splits each traced warm-up run among the processes repromin itself started:
the install commands, the first test runs (two on the base side, one on the head side),
the further test runs (the reruns of the candidates, and any run of one file alone), the
git calls, anything else, and what is left: repromin's own time (planning, reading and
writing reports, the judge); its ratio is the gate's time over its own install and first
test runs, the bare work as the same run did it, which the network and the machine's
other load sway far less than two runs apart. WORK/ID holds gate.log, gate-warm-up.log and
gate-warm-up.strace (the gate's stderr and trace), bare.log (the bare commands and their
output) and reports/; --keep keeps the clones and worktrees too. The exit status is 0
when every measured case is within 1.1x, 1 otherwise, 2 on bad usage.
"""

import argparse
import base64
import gzip
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = 1.1
NICE = ["nice", "-n", "10"]

PIP = ".venv/bin/python -m pip install -q"
PYTEST = ".venv/bin/python -m pytest -p no:cacheprovider -q --junitxml={report} {tests}"
CARGO = (
    "if cargo nextest --version >/dev/null 2>&1; then cargo nextest run --no-fail-fast "
    "--tool-config-file {nextest_config} --profile repromin {test_targets}; "
    "else cargo test --no-fail-fast {test_targets}; fi"
)
GO = "go test -count=1 -json {packages}"


# The corpus runner's ways of finding a mirror, filtering cases and cleaning the
# environment, shared rather than copied.
_spec = importlib.util.spec_from_file_location("gate_corpus", HERE / "gate-corpus.py")
gate_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gate_corpus)
find_source, keep, clean_env = gate_corpus.find_source, gate_corpus.keep, gate_corpus.clean_env


def q(word: str) -> str:
    """Quotes as the gate does: bare when only safe characters, else in single quotes."""
    if word and re.fullmatch(r"[A-Za-z0-9\-_.,/=:@+%]+", word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def split_top(text: str) -> list[str]:
    """Splits on ", " outside parentheses and brackets."""
    out, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if depth == 0 and text.startswith(", ", i):
            out.append(cur)
            cur = ""
            i += 2
            continue
        cur += c
        i += 1
    out.append(cur)
    return out


def commands_of(configuration: str) -> tuple[list[str], str] | str:
    """The install commands and the test command template of a detected configuration
    line, or why they cannot be told."""
    m = re.match(r"detected (\w+) at the merge base: (.*)$", configuration)
    if not m:
        return f"not a detected configuration: {configuration}"
    eco, notes = m.group(1), m.group(2)
    if eco == "rust":
        return ["cargo fetch --quiet"], CARGO
    if eco == "go":
        return ["go mod download"], GO
    if eco != "python":
        return f"the bare run knows python, rust and go, not {eco}"
    install = ["[ -d .venv ] || python3 -m venv .venv", f"{PIP} pytest"]
    installable = "with the project installed in it" in notes
    deps = re.search(r"test dependencies: (.*)$", notes)
    extra = re.match(r"the project's extra \[([^\]]+)\]$", deps.group(1)) if deps else None
    if extra:
        install.append(f"{PIP} -e {q('.[' + extra.group(1) + ']')}")
    elif installable:
        install.append(f"{PIP} -e .")
    if deps and not extra:
        what = deps.group(1)
        pkgs = re.match(r"(.*?) \((.*)\)$", what)
        if pkgs and not what.endswith(".txt"):
            words = [q(p) for p in split_top(pkgs.group(2))]
            if words:
                install.append(f"{PIP} {' '.join(words)}")
        elif all(p.endswith(".txt") for p in what.split(", ")):
            install.extend(f"{PIP} -r {q(p)}" for p in what.split(", "))
        else:
            return f"unknown test dependencies: {what}"
    return install, PYTEST


def cargo_package(tree: Path, directory: str) -> str | None:
    manifest = tree / directory / "Cargo.toml" if directory else tree / "Cargo.toml"
    try:
        import tomllib

        return tomllib.loads(manifest.read_text())["package"]["name"]
    except Exception:
        return None


def expand(template: str, tests: list[str], tree: Path, rundir: Path) -> str:
    """The template with its placeholders filled as the gate fills them."""
    report = rundir / "report.xml"
    packages, names = [], []
    rust = []
    for t in tests:
        m = re.match(r"^(?:(.*)/)?tests/([^/]+?)(?:\.rs|/main\.rs)$", t)
        if m:
            rust.append((m.group(1) or "", m.group(2)))
    members = any(d for d, _ in rust)
    for d, name in rust:
        if members:
            pkg = cargo_package(tree, d)
            if pkg is None:
                continue
            arg = f"-p {q(pkg)}"
            if arg not in packages:
                packages.append(arg)
        arg = f"--test {q(name)}"
        if arg not in names:
            names.append(arg)
    targets = packages + names
    gopkgs = []
    for t in tests:
        d = os.path.dirname(t)
        p = q(f"./{d}" if d else "./")
        if p not in gopkgs:
            gopkgs.append(p)
    store = rundir / "nextest"
    config = rundir / "repromin-nextest.toml"
    if "{nextest_config}" in template:
        config.write_text(
            f'[store]\ndir = "{store}"\n\n[profile.repromin]\nfail-fast = false\nretries = 0\n\n'
            '[profile.repromin.junit]\npath = "junit.xml"\n'
        )
    return (
        template.replace("{tests}", " ".join(q(t) for t in tests))
        .replace("{report}", q(str(report)))
        .replace("{test_targets}", " ".join(targets))
        .replace("{packages}", " ".join(gopkgs))
        .replace("{nextest_config}", q(f"repromin:{config}"))
    )


def traced_children(trace: Path) -> tuple[float, list[tuple[float, float, list[str]]]]:
    """From `strace -f -ttt -e trace=execve,clone,clone3,fork,vfork` of a gate run: its
    wall time, and each process that repromin itself started (not its commands' own
    children): start, seconds, argv. The gate's `sh -c` runs and its git calls are these."""
    root, first_t, last_t = None, None, 0.0
    threads: set[int] = set()
    pending: dict[int, str] = {}
    early: dict[int, list[str]] = {}  # the argv of a process seen before its parent's clone returned
    alive: dict[int, dict] = {}
    kids: list[dict] = []
    for line in trace.read_text(errors="replace").splitlines():
        m = re.match(r"^(\d+)\s+(\d+\.\d+) (.*)$", line)
        if not m:
            continue
        pid, t, rest = int(m.group(1)), float(m.group(2)), m.group(3)
        if root is None:
            root, first_t = pid, t
            threads.add(pid)
        last_t = t
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")]
            continue
        resumed = re.match(r"<\.\.\. \w+ resumed>(.*)$", rest)
        if resumed:
            rest = pending.pop(pid, "") + resumed.group(1)
        if rest.startswith("+++ "):
            early.pop(pid, None)
            if pid != root:
                threads.discard(pid)
            kid = alive.pop(pid, None)
            if kid is not None:
                kid["end"] = t
            continue
        c = re.match(r"(clone3?|fork|vfork)\((.*)\) = (\d+)$", rest)
        if c:
            if pid in threads:
                child = int(c.group(3))
                if "CLONE_THREAD" in c.group(2):
                    threads.add(child)
                else:
                    kid = {"start": t, "end": None, "argv": early.pop(child, None)}
                    alive[child] = kid
                    kids.append(kid)
            continue
        e = re.match(r'execve\("[^"]*", (\[(?:"(?:[^"\\]|\\.)*"(?:, )?)*\])', rest)
        if e:
            try:
                argv = json.loads(e.group(1))
            except json.JSONDecodeError:
                argv = [e.group(1)]
            if pid in alive:
                if alive[pid]["argv"] is None:
                    alive[pid]["argv"] = argv
            elif pid not in early:
                early[pid] = argv
    out = []
    for kid in kids:
        end = kid["end"] if kid["end"] is not None else last_t
        out.append((kid["start"], end - kid["start"], kid["argv"] or []))
    return (last_t - first_t if root is not None else 0.0), out


def breakdown(trace: Path, install: list[str]) -> dict:
    """Where a traced gate run's time went: per side, the install commands, the first test
    runs and the further ones (reruns, runs of one file), git; and repromin's own."""
    wall, kids = traced_children(trace)
    out = {"wall": wall, "install": 0.0, "first": 0.0, "further": 0.0, "further_n": [0, 0],
           "git": 0.0, "git_n": 0, "other": 0.0}
    side, runs = -1, 0
    for _, secs, argv in kids:
        name = os.path.basename(argv[0]) if argv else ""
        if name == "git":
            out["git"] += secs
            out["git_n"] += 1
            if "worktree" in argv and "add" in argv:
                side, runs = side + 1, 0
            continue
        if name == "sh" and len(argv) >= 3 and argv[1] == "-c":
            command = argv[2]
            if command in install:
                out["install"] += secs
                continue
            if command.startswith("ulimit -d "):
                runs += 1
                if runs <= (2 if side == 0 else 1):
                    out["first"] += secs
                else:
                    out["further"] += secs
                    out["further_n"][min(max(side, 0), 1)] += 1
                continue
        if not (name == "sh" and len(argv) >= 3 and "kill -s KILL" in argv[2]):
            out["other"] += secs
    out["own"] = wall - out["install"] - out["first"] - out["further"] - out["git"] - out["other"]
    return out


def traced_row(case_id: str, b: dict) -> str:
    """A row of the traced table; its ratio is the gate's wall time over its own bare work
    (install and first test runs) in the same run."""
    bare = b["install"] + b["first"]
    ratio = f"{b['wall'] / bare:.2f}" if bare else ""
    return (
        f"| {case_id} | {b['wall']:.1f} | {b['install']:.1f} | {b['first']:.1f} "
        f"| {b['further_n'][0]}+{b['further_n'][1]}: {b['further']:.1f} "
        f"| {b['git_n']}: {b['git']:.1f} | {b['other']:.1f} | {b['own']:.1f} | {ratio} |"
    )


def decode(path: Path) -> dict | None:
    try:
        return json.loads(gzip.decompress(base64.b64decode(path.read_text().strip())))
    except Exception:
        return None


def report_files(report: dict | None) -> list[str]:
    if not report:
        return []
    outcome = report.get("outcome", {})
    if outcome.get("kind") != "report":
        return []
    return [f["path"] for f in outcome.get("report", {}).get("files", [])]


def git(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], check=True, capture_output=True, **kw)


def fresh_clone(source: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    git("clone", "-q", "--no-checkout", str(source), str(dest))


class Bare:
    """The bare work in one clone, every step timed."""

    def __init__(self, clone: Path, scratch: Path, timeout: int):
        self.clone, self.scratch, self.timeout = clone, scratch, timeout
        self.steps: list[tuple[str, float, int]] = []
        self.runs = 0

    def timed(self, label: str, fn) -> float:
        start = time.monotonic()
        rc = fn()
        secs = time.monotonic() - start
        self.steps.append((label, secs, rc))
        return secs

    def sh(self, command: str, tree: Path, log) -> int:
        self.runs += 1
        tmp = self.scratch / f"tmp-{self.runs}"
        tmp.mkdir(parents=True)
        env = clean_env()
        env.update({"CI": "1", "TMPDIR": str(tmp)})
        log.write(f"\n$ {command}   (in {tree})\n".encode())
        log.flush()
        try:
            return subprocess.run(
                [*NICE, "sh", "-c", command], cwd=tree, env=env, stdout=log, stderr=log,
                timeout=self.timeout,
            ).returncode
        except subprocess.TimeoutExpired:
            return 124

    def worktree(self, name: str, commit: str) -> Path:
        tree = self.scratch / name
        start = time.monotonic()
        git("-C", str(self.clone), "worktree", "add", "-q", "--detach", str(tree), commit)
        self.steps.append((f"{name} worktree", time.monotonic() - start, 0))
        return tree

    def install(self, side: str, install: list[str], tree: Path, log) -> None:
        def run():
            for command in install:
                rc = self.sh(command, tree, log)
                if rc:
                    return rc
            return 0

        self.timed(f"{side} install", run)

    def test(self, label: str, template: str, tests: list[str], tree: Path, log) -> None:
        rundir = self.scratch / f"run-{label.replace(' ', '-')}"
        rundir.mkdir(parents=True)
        command = expand(template, tests, tree, rundir)
        self.timed(label, lambda: self.sh(command, tree, log))


def bare_run(case, source, work, install, template, tests, timeout) -> dict:
    """Does the bare work once; its steps' times by label."""
    scratch = work / "bare"
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    clone = scratch / "clone"
    fresh_clone(source, clone)
    bare = Bare(clone, scratch, timeout)
    with open(work / "bare.log", "ab") as log:
        log.write(f"\n=== bare run {time.strftime('%H:%M:%S')} ===\n".encode())
        base = bare.worktree("base", case["merge_base"])
        bare.install("base", install, base, log)

        def overlay():
            for path in case["test_files"]:
                data = git("-C", str(clone), "show", f"{case['head']}:{path}").stdout
                dest = base / path
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
            return 0

        bare.timed("overlay", overlay)
        bare.test("base test", template, tests, base, log)
        bare.test("base test 2", template, tests, base, log)
        head = bare.worktree("head", case["head"])
        bare.install("head", install, head, log)
        bare.test("head test", template, tests, head, log)
    return {label: (secs, rc) for label, secs, rc in bare.steps}


def gate_run(case, source, repromin, work, timeout, trace=None) -> tuple[float, str, str, Path]:
    clone = work / "gate-clone"
    fresh_clone(source, clone)
    git("-C", str(clone), "checkout", "-q", case["head"])
    reports = work / "reports"
    if reports.exists():
        shutil.rmtree(reports)
    tracer = []
    if trace is not None:
        tracer = ["strace", "-f", "--seccomp-bpf", "-q", "-ttt", "-s", "65536", "-e",
                  "trace=execve,clone,clone3,fork,vfork", "-e", "signal=none", "-o", str(trace)]
    cmd = [
        "timeout", str(timeout), *NICE, *tracer, repromin, "run", "--no-reduce",
        "--base", case["merge_base"], "--head", case["head"], "--reports", str(reports),
    ]
    start = time.monotonic()
    with open(work / "gate.log", "wb") as log:
        proc = subprocess.run(cmd, cwd=clone, env=clean_env(), stdout=subprocess.PIPE, stderr=log)
    secs = time.monotonic() - start
    verdict = "no-line" if proc.returncode != 124 else "timeout"
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("repromin/v1 "):
            try:
                verdict = json.loads(line[len("repromin/v1 "):]).get("verdict", "?")
            except json.JSONDecodeError:
                verdict = "bad-line"
    configuration = ""
    for line in (work / "gate.log").read_text(errors="replace").splitlines():
        if line.startswith("configuration: "):
            configuration = line[len("configuration: "):]
    return secs, verdict, configuration, reports


def run_case(case, source, repromin, work, args) -> tuple[str, float | None, str | None]:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for sha in (case["merge_base"], case["head"]):
        if subprocess.run(["git", "-C", str(source), "cat-file", "-e", sha + "^{commit}"],
                          capture_output=True).returncode:
            return f"| {case['id']} | missing | | | | | | | | commit {sha[:12]} is not in {source} |", None, None
    # The gate first: with the warm-up, this run only fills the caches and tells the
    # configuration and the selected tests, and a second one is timed.
    warm = not args.no_warm_up
    trace = work / "gate-warm-up.strace" if warm and shutil.which("strace") else None
    secs, verdict, configuration, reports = gate_run(case, source, repromin, work, args.timeout, trace)
    cmds = commands_of(configuration)
    if isinstance(cmds, str):
        return f"| {case['id']} | {verdict} | | | | | | | | not measured: {cmds} |", None, None
    install, template = cmds
    heads = decode(reports / "head.report")
    bases = decode(reports / "base.report")
    tests = []
    for f in report_files(heads) + report_files(bases):
        if f not in tests:
            tests.append(f)
    if not tests:
        return f"| {case['id']} | {verdict} | | | | | | | | not measured: the reports name no test file |", None, None
    if warm:
        (work / "gate.log").rename(work / "gate-warm-up.log")
        shutil.rmtree(reports)
        secs, verdict, configuration, reports = gate_run(case, source, repromin, work, args.timeout)
    steps = bare_run(case, source, work, install, template, tests, args.timeout)
    failed = [label for label, (_, rc) in steps.items() if rc and "test" not in label]
    rerun_b = len((decode(reports / "base-rerun.report") or {}).get("reruns", []))
    rerun_h = len((decode(reports / "head.report") or {}).get("reruns", []))

    def s(label):
        return steps.get(label, (0.0, 0))[0]

    b_inst, h_inst = s("base install"), s("head install")
    b_test = s("base test") + s("base test 2")
    h_test = s("head test")
    bare = b_inst + b_test + h_inst + h_test
    gitsecs = s("base worktree") + s("overlay") + s("head worktree")
    ratio = secs / bare if bare else float("inf")
    notes = []
    if failed:
        notes.append(f"bare step failed: {', '.join(failed)}")
    if verdict != case["expected_verdict"]:
        notes.append(f"expected {case['expected_verdict']}")
    parts = f"{b_inst:.1f} + {b_test:.1f} + {h_inst:.1f} + {h_test:.1f}"
    traced = None
    if trace is not None and trace.is_file():
        b = breakdown(trace, install)
        traced = traced_row(case["id"], b)
    if not args.keep:
        shutil.rmtree(work / "gate-clone", ignore_errors=True)
        shutil.rmtree(work / "bare", ignore_errors=True)
    row = (
        f"| {case['id']} | {verdict} | {secs:.1f} | {bare:.1f} | {parts} | {gitsecs:.1f} "
        f"| {ratio:.2f} | {secs - bare:+.1f} | {rerun_b}+{rerun_h} | {'; '.join(notes)} |"
    )
    return row, ratio, traced


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("repromin")
    ap.add_argument("filters", nargs="*")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per gate run and per bare step (default 1200)")
    ap.add_argument("--work", type=Path, help="folder for clones and logs (default: a new temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep each case's clones and worktrees")
    ap.add_argument("--no-warm-up", action="store_true", help="time the first gate run (no untimed one before it)")
    ap.add_argument("--corpus", type=Path, default=HERE / "gate-corpus.json")
    args = ap.parse_args()

    if not args.mirrors.is_dir():
        print(f"gate-cost: {args.mirrors} is not a folder", file=sys.stderr)
        return 2
    repromin = shutil.which(args.repromin) or args.repromin
    if not (os.path.isfile(repromin) and os.access(repromin, os.X_OK)):
        print(f"gate-cost: {args.repromin} is not an executable file", file=sys.stderr)
        return 2
    repromin = os.path.abspath(repromin)
    cases = [c for c in json.loads(args.corpus.read_text())["cases"] if keep(c, args.filters)]
    if not cases:
        print("gate-cost: no case matches the filter", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="gate-cost-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"<!-- logs: {work} -->", file=sys.stderr)

    print("| case | verdict | gate s | bare s | base install + 2 tests + head install + test | git s "
          "| ratio | gate − bare s | reruns | note |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- | --- |", flush=True)
    over = 0
    traced = []
    for case in cases:
        source = find_source(args.mirrors, case["repo"])
        if source is None:
            row, ratio, t = f"| {case['id']} | missing | | | | | | | | no repository for {case['repo']} in {args.mirrors} |", None, None
        else:
            row, ratio, t = run_case(case, source, repromin, work / case["id"], args)
        if ratio is not None and ratio > TARGET:
            over += 1
        if t:
            traced.append(t)
        print(row, flush=True)
    if traced:
        print("\nThe warm-up gate runs, traced: seconds of the commands repromin started.\n")
        print("| case | gate s | install s | first test runs s | further runs (base+head): s "
              "| git (calls): s | other s | repromin's own s | ratio |")
        print("| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |")
        for t in traced:
            print(t)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
