#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/TARGET from the examples of docs/ and the literal
inputs of the unit tests. Run from the repository root: python3 fuzz/make_seeds.py"""
import re, os, glob, json, hashlib
def literals(src):
    """Yield decoded Rust string literals (raw and normal, byte strings too)."""
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i); i = n if j < 0 else j; continue
        m = re.compile(r'b?r(#*)"').match(src, i)
        if m and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            hashes = m.group(1); end = '"' + hashes
            j = src.find(end, m.end())
            yield src[m.end():j]; i = j + len(end); continue
        if c == "'" :
            # char literal or lifetime
            m = re.compile(r"'(\\.|[^\\'])'").match(src, i)
            i = m.end() if m else i + 1; continue
        if c == '"' or (c == 'b' and i + 1 < n and src[i+1] == '"' and not (src[i-1].isalnum() or src[i-1]=='_')):
            j = i + (2 if c == 'b' else 1); out = []
            while src[j] != '"':
                if src[j] == '\\':
                    e = src[j+1]
                    if e == '\n':
                        j += 2
                        while src[j] in ' \t\n': j += 1
                        continue
                    if e == 'u':
                        k = src.index('}', j); out.append(chr(int(src[j+3:k], 16))); j = k + 1; continue
                    if e == 'x':
                        out.append(chr(int(src[j+2:j+4], 16))); j += 4; continue
                    out.append({'n':'\n','t':'\t','r':'\r','0':'\0','\\':'\\','"':'"',"'":"'"}[e]); j += 2; continue
                out.append(src[j]); j += 1
            yield ''.join(out); i = j + 1; continue
        i += 1



os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
corpus = 'fuzz/corpus'
seeds = {}
def add(target, data):
    if isinstance(data, str): data = data.encode()
    seeds.setdefault(target, [])
    if data not in seeds[target]: seeds[target].append(data)
def lits(path): return list(literals(open(path).read()))

# line: docs blocks, fixtures, snapshots
doc = open('docs/line-schema.md').read().splitlines()
for i, l in enumerate(doc):
    if l.startswith('```text '): add('line', doc[i+1])
for l in lits('src/gate/line/fixtures.rs'):
    if l.startswith('repromin/v1 '): add('line', l)
for f in glob.glob('src/gate/line/snapshots/*.snap'):
    for l in open(f).read().splitlines():
        if l.startswith('repromin/v1 '): add('line', l)

# readers
rd = []
for f in glob.glob('src/gate/readers/*.rs'): rd += lits(f)
for l in rd:
    if len(l) < 30: continue
    if l.lstrip().startswith('<') and 'test' in l: add('junit', l)
    if l.startswith('{"num'):
        add('js_json', b'\x00' + l.encode()); add('js_json', b'\x01' + l.encode())
    if ('Compiling' in l or 'running ' in l or 'test result' in l) and not l.startswith('{'): add('libtest', l)
    if '"Action"' in l: add('go_test', l)
    if '"status":' in l and '"file":' in l:
        l = l.replace('"/w/', '"/root/repo/')
        add('node_test', l)
        for line in l.splitlines(): add('node_test', line + '\n')
    if '"Action"' in l:
        pkgs = {}
        for line in l.splitlines():
            m = re.search(r'"Package":"([^"]*)"', line)
            pkgs.setdefault(m.group(1) if m else '', []).append(line)
        for lines in pkgs.values(): add('go_test', '\n'.join(lines) + '\n')

# repo config: docs json blocks and the config tests
def json_blocks(path):
    out, d = [], open(path).read().splitlines()
    i = 0
    while i < len(d):
        if d[i].strip() == '```json':
            j = i + 1
            while d[j].strip() != '```': j += 1
            out.append('\n'.join(d[i+1:j]) + '\n'); i = j
        i += 1
    return out
for f in sorted(glob.glob('docs/*.md')):
    for b in json_blocks(f):
        if '"command"' in b and '"version"' in b: add('repo_config', b)
        if '"mutations"' in b: add('mutation_spec', b)
for l in lits('src/gate/config.rs'):
    if '"version"' in l: add('repo_config', l)
for l in lits('src/gate/mutants.rs'):
    if '"mutations"' in l: add('mutation_spec', l)
for f in glob.glob('tests/cli/*.rs'):
    for l in lits(f):
        if '"mutations"' in l and l.lstrip().startswith('{'): add('mutation_spec', l)
        if '"command"' in l and '"version"' in l and l.lstrip().startswith('{'): add('repo_config', l)

# manifests: the fixtures, by kind index
kinds = ['CARGO','PYPROJECT','PIPFILE','REQUIREMENTS','PACKAGE_JSON','COMPOSER_JSON','GO_MOD','GO_WORK','POM','CSPROJ','GEMFILE']
src = open('src/reduce/manifest/tests.rs').read()
for k, name in enumerate(kinds):
    m = re.search(r'const %s: &str = ' % name, src)
    lit = next(literals(src[m.end():]))
    add('manifest', bytes([k]) + lit.encode())

# decoder: reports as the writer writes their JSON; selector = type | layer << 2
sha = 'a' * 40
def dumps(v): return json.dumps(v, separators=(',', ':'), ensure_ascii=False)
report = {"files": [{"path": "tests/test_a.py", "tests": [
    {"name": "test_0_0", "status": "failed", "messages": ["AssertionError: 0"], "error_type": "AssertionError"},
    {"name": "test_1_1eef", "status": "passed"}]},
    {"path": "tests/test_b.py", "load_error": "ImportError: x", "tests": []}]}
sides = [
    {"v": 1, "side": "base", "commit": sha, "outcome": {"kind": "report", "exit_code": 1, "report": report}},
    {"v": 1, "side": "base", "commit": sha, "outcome": {"kind": "report", "exit_code": None, "report": {"files": []}}},
    {"v": 1, "side": "base", "commit": sha, "outcome": {"kind": "error", "message": "the base report is missing"}},
    {"v": 1, "side": "base", "commit": sha, "outcome": {"kind": "skipped", "reason": "no tests"}},
]
mutants = [
    {"v": 1, "side": "mutants", "commit": sha, "outcome": {"kind": "ran",
        "baseline": {"kind": "report", "exit_code": 0, "report": report},
        "runs": [{"spec": "tests/test_parse.mutations.json", "name": "drop-quote", "result": {"kind": "tested", "exit_code": 1, "report": report}},
                 {"spec": "tests/test_parse.mutations.json", "name": "off-by-one", "result": {"kind": "unbuilt", "message": "error: x"}},
                 {"spec": "tests/test_parse.mutations.json", "name": "third", "result": {"kind": "error", "message": "timed out"}}]}},
    {"v": 1, "side": "mutants", "commit": sha, "outcome": {"kind": "skipped", "reason": "not a change of tests alone"}},
]
reduces = [
    {"v": 1, "side": "reduce", "commit": sha, "outcome": {"kind": "reduced", "file": "tests/test_a.py", "name": "test_0",
        "signature": "AssertionError", "edits": [], "before": {"files": 12, "bytes": 48213}, "after": {"files": 1, "bytes": 412},
        "content_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "tree_sha256_v2": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "attempts": 40, "accepted": 7, "ended_by": "fixed-point", "holdout": {"runs": 30, "passes": 29, "rate": 0.9, "confidence": 0.95},
        "oracle_samples": 80, "reduce_ms": 1234}},
    {"v": 1, "side": "reduce", "commit": sha, "outcome": {"kind": "error", "message": "the reducer failed"}},
]
for t, values in [(0, sides), (1, mutants), (2, reduces)]:
    for v in values:
        add('decode', bytes([t | 2 << 2]) + dumps(v).encode())
    add('decode', bytes([t | 3 << 2 | 6 << 4]) + dumps(values[0]).encode())
add('decode', b'\x00H4sIAAAAAAAA/6tWKkktLlGyUlAqS8wpTVWqBQBCKu1WGQAAAA==')
add('decode', b'\x04\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00')

# workspace: pnpm-workspace.yaml texts (selector 0) and test files' imports (selector 1)
for l in lits('src/gate/detect/pnpm_workspace.rs'):
    if 'packages' in l: add('workspace', b'\x00' + l.encode())
for l in lits('src/gate/detect/imports.rs'):
    if 'import' in l or 'require' in l: add('workspace', b'\x01' + l.encode())

# frames: the real outputs of the unit tests of oracle/frames.rs (tracebacks, stacks, panics)
for l in lits('src/oracle/frames.rs'):
    if re.search(r'Traceback|\bat |panicked|panic:|goroutine|_{3,} test', l) and len(l) > 40:
        add('frames', l.replace('/work/ws', '/w/tree').encode())

for target, items in seeds.items():
    d = os.path.join(corpus, target); os.makedirs(d, exist_ok=True)
    for data in items:
        open(os.path.join(d, hashlib.sha1(data).hexdigest()), 'wb').write(data)
    print(target, len(items), sum(map(len, items)))
