#!/usr/bin/env node
// The `sluice` command as the package installs it (`npx sluice …`, `npm start`).
// It runs the built CLI (dist/src/cli/main.js) in this very process, so
// `sluice serve` is the server itself and signals reach it. When dist/ is
// missing or older than a source file it builds first with the TypeScript
// compiler from node_modules, so it works right after `npm install` or
// `npm ci`, and after every edit. Plain JavaScript: it runs before any build.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const BUILD_CONFIG = 'tsconfig.build.json';
const CLI = join('dist', 'src', 'cli', 'main.js');

const mtime = (file) => statSync(file).mtimeMs;

function* sourceFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** Why dist/ under `root` needs a build, or undefined when it is fresh. */
function staleReason(root) {
  const cli = join(root, CLI);
  if (!existsSync(cli)) return `${CLI} is missing`;
  const buildConfig = join(root, BUILD_CONFIG);
  // No sources beside dist/ (the image ships dist/ alone): nothing to be older than.
  if (!existsSync(buildConfig)) return undefined;
  for (const file of [buildConfig, join(root, 'tsconfig.json')]) {
    if (existsSync(file) && mtime(file) > mtime(cli)) return `${relative(root, file)} changed`;
  }
  // tsc writes dist/<dir>/<file>.js for each <dir>/<file>.ts it includes.
  const include = JSON.parse(readFileSync(buildConfig, 'utf8')).include || [];
  for (const dir of include) {
    if (!existsSync(join(root, dir))) continue;
    for (const source of sourceFiles(join(root, dir))) {
      const output = join(root, 'dist', relative(root, source)).replace(/\.ts$/, '.js');
      if (!existsSync(output) || mtime(output) < mtime(source)) return `${relative(root, source)} is newer than dist/`;
    }
  }
  return undefined;
}

/** Runs tsc from node_modules; its output goes to stderr so stdout stays the command's own. */
function build(root, reason) {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  } catch {
    return `cannot build (${reason}): the TypeScript compiler is not installed; run npm install first`;
  }
  process.stderr.write(`sluice: building dist/ (${reason})\n`);
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, BUILD_CONFIG)], { cwd: root, stdio: ['ignore', 2, 2] });
  if (run.status !== 0) return `the build failed (tsc exited ${run.status ?? run.signal}); see above`;
  return undefined;
}

function main() {
  const reason = staleReason(ROOT);
  const failed = reason === undefined ? undefined : build(ROOT, reason);
  if (failed !== undefined) {
    process.stderr.write(`sluice: ${failed}\n`);
    process.exit(1);
  }
  require(join(ROOT, CLI)).runCli(process.argv.slice(2));
}

if (require.main === module) main();

module.exports = { staleReason };
