// docs/plugins.md's table of hooks against the contract (PluginHooks in
// src/contract/plugin.ts): the same hooks, each with the parameters the
// contract gives it, so a hook added, removed or changed in the contract
// without the docs fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..', '..');
const page = readFileSync(join(root, 'docs', 'plugins.md'), 'utf8');
const contractFile = join(root, 'src', 'contract', 'plugin.ts');

/** The hooks table: each row's first cell, `name(params)`. */
function documented(): Map<string, string[]> {
  const start = page.indexOf('| Hook | When | What it may change |');
  const table = page.slice(start).split('\n').slice(2);
  const hooks = new Map<string, string[]>();
  for (const line of table) {
    if (!line.startsWith('|')) break;
    const m = /^\| `(\w+)\(([^)]*)\)`/.exec(line);
    if (m) hooks.set(m[1], m[2] === '' ? [] : m[2].split(',').map((p) => p.trim()));
  }
  return hooks;
}

/** PluginHooks' members, with their parameters' names. */
function contract(): Map<string, string[]> {
  const source = ts.createSourceFile(contractFile, readFileSync(contractFile, 'utf8'), ts.ScriptTarget.ES2022, true);
  const hooks = new Map<string, string[]>();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node) || node.name.text !== 'PluginHooks') return;
    for (const m of node.members) if (ts.isMethodSignature(m) && ts.isIdentifier(m.name)) hooks.set(m.name.text, m.parameters.map((p) => p.name.getText(source)));
  });
  return hooks;
}

describe('docs/plugins.md hooks', () => {
  it('lists the contract\'s hooks, each with its parameters', () => {
    const inCode = contract();
    expect(inCode.size).toBeGreaterThan(5);
    expect(Object.fromEntries(documented())).toEqual(Object.fromEntries(inCode));
  });
});
