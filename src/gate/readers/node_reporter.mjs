// A node:test reporter that writes one JSON object per test: file, full name (suite path
// joined with " > "), status, first failure message and its error's type; a file that fails to load is one
// record with status "load-error" and the file's stderr as its message.
export default async function* reporter(source) {
  const stacks = new Map();
  const stderr = new Map();
  for await (const event of source) {
    const d = event.data || {};
    if (event.type === 'test:stderr' && d.file) {
      const text = (stderr.get(d.file) || '') + String(d.message);
      stderr.set(d.file, text.slice(0, 4096));
    } else if (event.type === 'test:start') {
      const s = stacks.get(d.file) || [];
      s[d.nesting] = d.name;
      s.length = d.nesting + 1;
      stacks.set(d.file, s);
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      if (d.details && d.details.type === 'suite') continue;
      const s = (stacks.get(d.file) || []).slice(0, d.nesting);
      const status = d.skip !== undefined || d.todo !== undefined ? 'skipped' : event.type === 'test:pass' ? 'passed' : 'failed';
      const err = d.details && d.details.error;
      const fileLevel = d.nesting === 0 && d.file && d.name === d.file;
      if (fileLevel) {
        yield JSON.stringify({ file: d.file, name: null, status: 'load-error', message: (stderr.get(d.file) || (err && err.message) || 'the file failed to load').slice(0, 2048) }) + '\n';
        continue;
      }
      const message = err ? String((err.cause && err.cause.message) || err.message || err).slice(0, 2048) : null;
      const cause = err && (err.cause || err);
      const type = cause && typeof cause.name === 'string' ? cause.name : null;
      yield JSON.stringify({ file: d.file ?? null, name: [...s, d.name].join(' > '), status, message, type }) + '\n';
    }
  }
}
