#!/usr/bin/env python3
"""Count false `reproduced` verdicts of `repromin run` on tests that fail at random.

Usage:
    bench/gate-flaky.py REPROMIN [--runs N] [--fix-runs N] [--jobs J]
                        [--runners pytest,vitest,go] [--node-modules DIR]
                        [--timeout S] [--work DIR] [--keep]

REPROMIN is the binary to test. For each runner (pytest, vitest, go test) the script
builds small git repositories under --work (default: a new temporary folder), with no
network, each with a base commit and a head commit and an explicit
`.github/repromin.json`, in four shapes:

    1 flaky          the head changes a source file trivially (a comment) and adds one
                     test that fails at random with probability p, independently on
                     every run (Python's random.random(), JavaScript's Math.random(),
                     Go's rand.New(rand.NewSource(time.Now().UnixNano())))
    10 flaky         the same with ten such tests in one test file
    fix              the base has a bug, the head fixes it and adds a test that fails
                     on base and passes on head every time
    fix + 10 flaky   that fix, its test and ten tests of `10 flaky` at p = 0.5, all
                     eleven in one test file

The flaky shapes run for p in 0.1, 0.3, 0.5 and 0.7, --runs times each (default 38);
the fix shapes --fix-runs times each (default 10): with the defaults 972 gate runs for
the three runners. Each gate run is a fresh

    nice -n 10 REPROMIN run --no-reduce --base BASE --head HEAD --repo CLONE

with REPROMIN_*, GITHUB_* and CI removed from the environment; J of them run at once
(--jobs, default 2), each job slot on its own clone of the case's repository. The
verdict and counts are read from the `repromin/v1` line on stdout. Runs of every
configuration are interleaved, so that load on the machine is spread evenly.

vitest is linked into each vitest repository as `node_modules` by its install step,
from --node-modules (default: target/test-node/node_modules of this repository, where
.ci/run installs it). pytest (for python3) and go must be on PATH.

Before the gate runs, the script times the head's test command of the `fix` shape, run
by hand in a clone (after its install step) five times one after another: the bare
cost of one test run, against which the gate's seconds can be read.

Output, to stdout as Markdown: a table of the flaky configurations (runs, how many
were `reproduced`, that rate with a one-sided 95 % Clopper-Pearson upper bound, the
other verdicts, mean seconds per gate run), the same pooled per runner and overall, and
a table of the fix shapes (share `reproduced`; for `fix + 10 flaky`, how many runs
called a flaky test `reproduces`). Progress goes to stderr. Every run's result is
appended to WORK/results.jsonl; the stderr of a run whose verdict is not the expected
one (or `error`) is kept in WORK/logs/. SIGINT or SIGTERM stops starting new runs and
prints the table of the runs that ended.

Exit status: 0 when every target holds (at most 1 % of the runs of each flaky
configuration `reproduced`, as an observed rate; every fix run `reproduced`; no `error`
verdict, timeout or missing line; every run made), 1 otherwise, 2 on bad usage. A
flaky test called `reproduces` beside a real fix leaves the verdict right; it is
counted in the table, and its run's stderr kept, but it is no target: the gate allows
it with a chance of at most 1 % per pull request, which ten runs cannot measure.
"""

import argparse
import concurrent.futures
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROBS = (0.1, 0.3, 0.5, 0.7)
FLAKY_SHAPES = ("1 flaky", "10 flaky")
FIX_SHAPES = ("fix", "fix + 10 flaky")
TARGET_RATE = 0.01
BARE_RUNS = 5

# ---------------------------------------------------------------- the repositories


def pytest_files(shape: str, p: float, modules: Path) -> tuple[dict, dict]:
    config = {
        "version": 1,
        "tests": ["tests/**/test_*.py"],
        "carry": ["tests/**/conftest.py"],
        "command": "python3 -m pytest -p no:cacheprovider -q --junitxml={report} {tests}",
        "report": "junit",
    }
    fix = shape.startswith("fix")
    base = {
        ".github/repromin.json": json.dumps(config) + "\n",
        "calc.py": "def add(a, b):\n    return a - b\n\n\ndef one():\n    return 1\n",
        ".gitignore": "__pycache__/\n",
    }
    head = {}
    if fix:
        head["calc.py"] = base["calc.py"].replace("a - b", "a + b")
        head["tests/test_calc.py"] = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    else:
        head["calc.py"] = base["calc.py"].replace("def one", "# The unit.\ndef one")
    count = {"1 flaky": 1, "10 flaky": 10, "fix": 0, "fix + 10 flaky": 10}[shape]
    if count:
        text = f"import random\n\nfrom calc import add, one\n\nP = {p}\n"
        if fix:
            text += "\n\ndef test_add():\n    assert add(2, 3) == 5\n"
        for i in range(count):
            text += (
                f"\n\ndef test_flaky_{i:02}():\n"
                "    assert one() == 1\n"
                "    assert not random.random() < P, 'failed at random'\n"
            )
        head["tests/test_calc.py"] = text
    return base, head


def vitest_files(shape: str, p: float, modules: Path) -> tuple[dict, dict]:
    config = {
        "version": 1,
        "tests": ["test/**/*.test.js"],
        "install": [f"ln -s {modules} node_modules"],
        "command": "node_modules/.bin/vitest run --reporter=junit --outputFile={report} {tests}",
        "report": "junit",
    }
    fix = shape.startswith("fix")
    base = {
        ".github/repromin.json": json.dumps(config) + "\n",
        "package.json": '{"name":"calc","type":"module","private":true}\n',
        "src/calc.js": "export function add(a, b) {\n  return a - b;\n}\n\nexport function one() {\n  return 1;\n}\n",
        ".gitignore": "node_modules\n",
    }
    head = {}
    if fix:
        head["src/calc.js"] = base["src/calc.js"].replace("a - b", "a + b")
        head["test/calc.test.js"] = (
            "import { test, expect } from 'vitest';\n"
            "import { add } from '../src/calc.js';\n\n"
            "test('add', () => {\n  expect(add(2, 3)).toBe(5);\n});\n"
        )
    else:
        head["src/calc.js"] = base["src/calc.js"].replace("export function one", "// The unit.\nexport function one")
    count = {"1 flaky": 1, "10 flaky": 10, "fix": 0, "fix + 10 flaky": 10}[shape]
    if count:
        text = (
            "import { test, expect } from 'vitest';\n"
            "import { add, one } from '../src/calc.js';\n\n"
            f"const P = {p};\n"
        )
        if fix:
            text += "\ntest('add', () => {\n  expect(add(2, 3)).toBe(5);\n});\n"
        for i in range(count):
            text += (
                f"\ntest('flaky {i:02}', () => {{\n"
                "  expect(one()).toBe(1);\n"
                "  expect(Math.random() < P, 'failed at random').toBe(false);\n"
                "});\n"
            )
        head["test/calc.test.js"] = text
    return base, head


def go_files(shape: str, p: float, modules: Path) -> tuple[dict, dict]:
    config = {
        "version": 1,
        "tests": ["**/*_test.go"],
        "command": "go test -count=1 -json {packages}",
        "report": "go-test-json",
    }
    fix = shape.startswith("fix")
    base = {
        ".github/repromin.json": json.dumps(config) + "\n",
        "go.mod": "module example.com/calc\n\ngo 1.19\n",
        "calc/calc.go": "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\nfunc One() int {\n\treturn 1\n}\n",
    }
    head = {}
    if fix:
        head["calc/calc.go"] = base["calc/calc.go"].replace("a - b", "a + b")
        head["calc/calc_test.go"] = (
            "package calc\n\nimport \"testing\"\n\n"
            "func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"
        )
    else:
        head["calc/calc.go"] = base["calc/calc.go"].replace("func One", "// One is the unit.\nfunc One")
    count = {"1 flaky": 1, "10 flaky": 10, "fix": 0, "fix + 10 flaky": 10}[shape]
    if count:
        text = (
            "package calc\n\nimport (\n\t\"math/rand\"\n\t\"testing\"\n\t\"time\"\n)\n\n"
            f"const p = {p}\n\n"
            "var rng = rand.New(rand.NewSource(time.Now().UnixNano()))\n"
        )
        if fix:
            text += "\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"
        for i in range(count):
            text += (
                f"\nfunc TestFlaky{i:02}(t *testing.T) {{\n"
                "\tif One() != 1 {\n\t\tt.Fatal(\"One() != 1\")\n\t}\n"
                "\tif rng.Float64() < p {\n\t\tt.Fatal(\"failed at random\")\n\t}\n"
                "}\n"
            )
        head["calc/calc_test.go"] = text
    return base, head


RUNNERS = {"pytest": pytest_files, "vitest": vitest_files, "go": go_files}


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    out = subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
         "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, env=env, check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


def write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def make_repo(path: Path, base_files: dict, head_files: dict) -> tuple[str, str]:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    write(path, base_files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    write(path, head_files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "head")
    return base, git(path, "rev-parse", "HEAD")


# ---------------------------------------------------------------- statistics


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(k + 1):
        total += math.exp(
            math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
        )
    return min(total, 1.0)


def upper_bound(k: int, n: int, alpha: float = 0.05) -> float:
    """One-sided Clopper-Pearson upper bound: the p with P(X <= k; n, p) = alpha."""
    if n == 0 or k >= n:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if binom_cdf(k, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


# ---------------------------------------------------------------- running


def clean_env() -> dict:
    return {
        k: v
        for k, v in os.environ.items()
        if not (k.startswith("REPROMIN_") or k.startswith("GITHUB_") or k == "CI")
    }


class Case:
    def __init__(self, runner: str, shape: str, p: float | None, root: Path, modules: Path):
        self.runner, self.shape, self.p = runner, shape, p
        self.id = f"{runner}-{shape.replace(' + ', '+').replace(' ', '')}" + (f"-p{p}" if p is not None else "")
        self.master = root / "repos" / self.id
        files = RUNNERS[runner](shape, 0.5 if p is None else p, modules)
        self.base, self.head = make_repo(self.master, *files)
        self.clones: dict[int, Path] = {}
        self.lock = threading.Lock()

    def clone(self, slot: int) -> Path:
        with self.lock:
            if slot not in self.clones:
                path = self.master.parent / f"{self.id}.{slot}"
                subprocess.run(["git", "clone", "-q", str(self.master), str(path)], check=True)
                self.clones[slot] = path
            return self.clones[slot]


slots = threading.local()
slot_counter = iter(range(1_000_000))
stop = threading.Event()


def gate_run(case: Case, index: int, repromin: str, work: Path, timeout: int) -> dict:
    if not hasattr(slots, "n"):
        slots.n = next(slot_counter)
    result = {"case": case.id, "runner": case.runner, "shape": case.shape, "p": case.p, "index": index}
    if stop.is_set():
        result["verdict"] = "not-run"
        return result
    repo = case.clone(slots.n)
    cmd = ["nice", "-n", "10", repromin, "run", "--no-reduce",
           "--base", case.base, "--head", case.head, "--repo", str(repo)]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=repo, env=clean_env(), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout)
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out, err, code = e.stdout or b"", e.stderr or b"", None
    result["seconds"] = round(time.monotonic() - start, 3)
    result["exit"] = code
    verdict, counts, error = ("timeout" if code is None else "no-line"), {}, None
    for line in out.decode("utf-8", "replace").splitlines():
        if line.startswith("repromin/v1 "):
            try:
                obj = json.loads(line[len("repromin/v1 "):])
                verdict, counts, error = obj.get("verdict", "?"), obj.get("counts", {}), obj.get("error")
            except json.JSONDecodeError:
                verdict = "bad-line"
            result["line"] = line
            break
    result.update(verdict=verdict, counts=counts)
    if error:
        result["error"] = error
    expected = case.shape in FIX_SHAPES
    ok = (verdict == "reproduced") == expected and verdict not in ("error", "timeout", "no-line", "bad-line")
    if expected and counts.get("reproduces", 0) != 1:
        ok = False  # kept in the logs: a flaky test called `reproduces` beside the fix
    if not ok:
        logs = work / "logs"
        logs.mkdir(exist_ok=True)
        (logs / f"{case.id}-{index}.log").write_bytes(
            b"$ " + " ".join(cmd).encode() + b"\n" + out + b"\n--- stderr ---\n" + err
        )
    return result


def bare_cost(case: Case, work: Path) -> float | None:
    """Mean seconds of the head's test command, run by hand after the install step."""
    path = work / "repos" / f"{case.id}.bare"
    subprocess.run(["git", "clone", "-q", str(case.master), str(path)], check=True)
    config = json.loads((path / ".github/repromin.json").read_text())
    for step in config.get("install", []):
        subprocess.run(step, shell=True, cwd=path, check=True)
    tests = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and (
        p.name.startswith("test_") and p.suffix == ".py" or p.name.endswith(".test.js") or p.name.endswith("_test.go")))
    packages = sorted({"./" + str(Path(t).parent) for t in tests})
    times = []
    for i in range(BARE_RUNS):
        report = work / f"bare-{case.runner}-{i}.report"
        cmd = (config["command"].replace("{report}", str(report)).replace("{tests}", " ".join(tests))
               .replace("{packages}", " ".join(packages)))
        start = time.monotonic()
        proc = subprocess.run(["nice", "-n", "10", "sh", "-c", cmd], cwd=path, env=clean_env(),
                              stdin=subprocess.DEVNULL, capture_output=True)
        times.append(time.monotonic() - start)
        if proc.returncode != 0:
            print(f"gate-flaky: the bare {case.runner} test command failed ({proc.returncode}): {cmd}\n"
                  + proc.stdout.decode("utf-8", "replace")[-2000:], file=sys.stderr)
            return None
    return sum(times) / len(times)


# ---------------------------------------------------------------- the tables


def verdict_summary(results: list[dict], skip: str | None = None) -> str:
    seen: dict[str, int] = {}
    for r in results:
        if r["verdict"] != skip:
            seen[r["verdict"]] = seen.get(r["verdict"], 0) + 1
    return ", ".join(f"{v} {n}" for v, n in sorted(seen.items(), key=lambda x: (-x[1], x[0])))


def mean_seconds(results: list[dict]) -> str:
    secs = [r["seconds"] for r in results if "seconds" in r]
    return f"{sum(secs) / len(secs):.1f}" if secs else "-"


def report(cases: list[Case], results: list[dict], bare: dict, wanted: dict) -> bool:
    done = [r for r in results if r["verdict"] != "not-run"]
    by_case: dict[str, list[dict]] = {}
    for r in done:
        by_case.setdefault(r["case"], []).append(r)
    all_ok = len(done) == sum(wanted.values())
    bad = {"error", "timeout", "no-line", "bad-line"}

    print("| runner | shape | p | runs | reproduced | rate | 95 % upper bound | other verdicts | mean s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    pooled: dict[str, list[dict]] = {}
    for case in cases:
        if case.shape not in FLAKY_SHAPES:
            continue
        rs = by_case.get(case.id, [])
        k, n = sum(r["verdict"] == "reproduced" for r in rs), len(rs)
        pooled.setdefault(case.runner, []).extend(rs)
        if n == 0 or k / n > TARGET_RATE or any(r["verdict"] in bad for r in rs):
            all_ok = False
        rate = pct(k / n) if n else "-"
        shown = f"**{k}**" if k else "0"
        print(f"| {case.runner} | {case.shape} | {case.p} | {n} | {shown} | {rate} | {pct(upper_bound(k, n))} "
              f"| {verdict_summary(rs, 'reproduced')} | {mean_seconds(rs)} |")
    everything = [r for rs in pooled.values() for r in rs]
    for name, rs in [*pooled.items(), ("all", everything)]:
        k, n = sum(r["verdict"] == "reproduced" for r in rs), len(rs)
        rate = pct(k / n) if n else "-"
        print(f"| {name} | all flaky | | {n} | {k} | {rate} | {pct(upper_bound(k, n))} "
              f"| {verdict_summary(rs, 'reproduced')} | {mean_seconds(rs)} |")

    print()
    print("| runner | shape | runs | reproduced | share | flaky tests called `reproduces` | other verdicts | mean s | bare test command s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for case in cases:
        if case.shape not in FIX_SHAPES:
            continue
        rs = by_case.get(case.id, [])
        k, n = sum(r["verdict"] == "reproduced" for r in rs), len(rs)
        extra = sum(max(r["counts"].get("reproduces", 0) - 1, 0) for r in rs if r.get("counts"))
        if n == 0 or k < n or any(r["verdict"] in bad for r in rs):
            all_ok = False
        share = pct(k / n) if n else "-"
        b = bare.get(case.runner)
        bare_s = f"{b:.2f}" if case.shape == "fix" and b is not None else ""
        print(f"| {case.runner} | {case.shape} | {n} | {k} | {share} | {extra} "
              f"| {verdict_summary(rs, 'reproduced')} | {mean_seconds(rs)} | {bare_s} |")

    errors = [r for r in done if r["verdict"] in bad]
    if errors:
        print(f"\n{len(errors)} runs ended without a usable verdict:")
        for r in errors[:10]:
            print(f"- {r['case']} #{r['index']}: {r['verdict']}, exit {r.get('exit')}: {r.get('error', '')[:300]}")
    if len(done) < sum(wanted.values()):
        print(f"\nStopped early: {len(done)} of {sum(wanted.values())} gate runs made.")
    return all_ok


# ---------------------------------------------------------------- main


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repromin")
    ap.add_argument("--runs", type=int, default=38, help="gate runs per flaky configuration (default 38)")
    ap.add_argument("--fix-runs", type=int, default=10, help="gate runs per fix shape (default 10)")
    ap.add_argument("--jobs", type=int, default=2, help="gate runs at once (default 2)")
    ap.add_argument("--runners", default="pytest,vitest,go", help="comma-separated (default pytest,vitest,go)")
    ap.add_argument("--node-modules", type=Path, default=HERE.parent / "target/test-node/node_modules",
                    help="a node_modules holding vitest (default: target/test-node/node_modules)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per gate run (default 900)")
    ap.add_argument("--work", type=Path, help="folder for the repositories and logs (default: a new temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep the repositories")
    args = ap.parse_args()

    runners = [r for r in args.runners.split(",") if r]
    if not runners or any(r not in RUNNERS for r in runners):
        print(f"gate-flaky: --runners takes a list of {', '.join(RUNNERS)}", file=sys.stderr)
        return 2
    if args.runs < 1 or args.fix_runs < 0 or args.jobs < 1:
        print("gate-flaky: --runs and --jobs must be at least 1, --fix-runs at least 0", file=sys.stderr)
        return 2
    repromin = shutil.which(args.repromin) or args.repromin
    if not (os.path.isfile(repromin) and os.access(repromin, os.X_OK)):
        print(f"gate-flaky: {args.repromin} is not an executable file", file=sys.stderr)
        return 2
    repromin = os.path.abspath(repromin)
    modules = args.node_modules.resolve()
    if "vitest" in runners and not (modules / ".bin/vitest").exists():
        print(f"gate-flaky: no vitest in {modules} (see --node-modules)", file=sys.stderr)
        return 2
    work = (args.work or Path(tempfile.mkdtemp(prefix="gate-flaky-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"<!-- work: {work} -->", file=sys.stderr)

    cases: list[Case] = []
    wanted: dict[str, int] = {}
    for runner in runners:
        for shape in FLAKY_SHAPES:
            for p in PROBS:
                cases.append(Case(runner, shape, p, work, modules))
                wanted[cases[-1].id] = args.runs
        for shape in FIX_SHAPES:
            cases.append(Case(runner, shape, None, work, modules))
            wanted[cases[-1].id] = args.fix_runs

    bare = {}
    for case in cases:
        if case.shape == "fix":
            bare[case.runner] = bare_cost(case, work)
            shown = "failed" if bare[case.runner] is None else f"{bare[case.runner]:.2f} s"
            print(f"bare {case.runner} test command: {shown}", file=sys.stderr)

    # Interleave the configurations: round i holds the i-th run of every case.
    tasks = [(case, i) for i in range(max(wanted.values())) for case in cases if i < wanted[case.id]]
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    results = []
    started = time.monotonic()
    with open(work / "results.jsonl", "a") as log, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(gate_run, case, i, repromin, work, args.timeout) for case, i in tasks]
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            r = fut.result()
            results.append(r)
            if r["verdict"] != "not-run":
                log.write(json.dumps(r) + "\n")
                log.flush()
            if n % 20 == 0 or n == len(futures):
                print(f"{n}/{len(futures)} gate runs, {time.monotonic() - started:.0f} s", file=sys.stderr)
    order = {c.id: k for k, c in enumerate(cases)}
    results.sort(key=lambda r: (order[r["case"]], r["index"]))

    ok = report(cases, results, bare, wanted)
    if not args.keep:
        shutil.rmtree(work / "repos", ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
