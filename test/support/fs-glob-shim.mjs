// node:fs with a globSync for Node 20 (see fs-glob-hook.mjs). The conformance
// CLI calls it in one place, `globSync('**/checks.json', { cwd })`, to find
// result files; this one answers any pattern path.matchesGlob understands,
// relative to `cwd`, as Node 22's does for a string pattern.
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

export function globSync(pattern, options = {}) {
  const cwd = options.cwd === undefined ? process.cwd() : String(options.cwd);
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  return fs.readdirSync(cwd, { recursive: true }).map(String)
    .filter((p) => patterns.some((g) => path.matchesGlob(p, g)));
}
