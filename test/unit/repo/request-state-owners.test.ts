// One writer for each piece of request state: every field of the per-request
// state (Context and its Forwarding, src/pipeline/context.ts) has one owning
// folder, and no code outside that folder assigns it. The writes are found by
// the type checker (an assignment, ++/--, or delete whose target resolves to
// the field's declaration), so a write through another name or a narrower
// type counts too. A new field needs an owner below before anything writes it.
// A request's lifecycle (its call in flight, whether its response's fate is
// decided, how it failed) is written only by the context's own methods
// (track, settle, failWith, finish), which the proxy, the pass-through routes
// and the error middleware call: its owner is the pipeline.
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..', '..');
const CONTEXT_FILE = join(root, 'src', 'pipeline', 'context.ts');

/** Each field's owner: a folder of src/ ("proxy"), or a file at its root ("app.ts"). */
const OWNERS: Record<'Context' | 'Forwarding', Record<string, string>> = {
  Context: {
    // Made by the pipeline as the request comes and goes.
    pluginState: 'pipeline', closed: 'pipeline',
    // Who the caller is, what the request costs and whether it is traced: the app's stages.
    principal: 'app.ts', cost: 'app.ts', trace: 'app.ts', slots: 'app.ts',
    // The request as each client API decodes it at its edge.
    model: 'api', user: 'api', route: 'api', chat: 'api', image: 'api', inputs: 'api', audio: 'api', stream: 'api', texts: 'api', source: 'api', requestHooks: 'api',
    // What the answer cost: recorded where the answer's bytes are relayed.
    usage: 'proxy',
    // How it failed: through failWith (the error middleware, a failure mid-stream) and finish.
    error: 'pipeline',
  },
  Forwarding: {
    // The lifecycle: through track, settle and failWith.
    call: 'pipeline', settled: 'pipeline',
    // How far the forwarding got: the proxy, which does it.
    streaming: 'proxy', streamedChars: 'proxy', skippedEvents: 'proxy', attempts: 'proxy', endpoint: 'proxy',
    costTrailer: 'proxy', streamId: 'proxy', streamCreated: 'proxy', deadline: 'proxy', stream: 'proxy',
    // What the client API's edge and its fallbacks decide.
    fail: 'api', fallbacks: 'api', output: 'api', continuation: 'api', keepsText: 'api',
    // What the output rules did.
    filtered: 'output-rules',
  },
};

const ownerOf = (file: string): string => {
  const parts = relative(root, file).split('/');
  if (parts[0] !== 'src') return parts[0];
  return parts.length === 2 ? parts[1] : parts[1];
};

interface Write { owner: string; field: string; writer: string; at: string }

/** Every assignment to a field of Context or Forwarding in src/ and plugins/. */
function writes(): Write[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const files = config.fileNames.filter((f) => /\/(src|plugins)\//.test(f));
  const program = ts.createProgram(files, config.options);
  const checker = program.getTypeChecker();
  const found: Write[] = [];
  const target = (node: ts.Node): void => {
    if (!ts.isPropertyAccessExpression(node)) return;
    const symbol = checker.getSymbolAtLocation(node.name);
    for (const d of symbol?.declarations ?? []) {
      if (d.getSourceFile().fileName !== CONTEXT_FILE || !ts.isClassDeclaration(d.parent) || !d.parent.name) continue;
      const cls = d.parent.name.text;
      if (cls !== 'Context' && cls !== 'Forwarding') continue;
      const file = node.getSourceFile();
      const { line } = file.getLineAndCharacterOfPosition(node.getStart());
      found.push({ owner: `${cls}.${node.name.text}`, field: node.name.text, writer: ownerOf(file.fileName), at: `${relative(root, file.fileName)}:${line + 1}` });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment) target(node.left);
    if ((ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) && (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)) target(node.operand);
    if (ts.isDeleteExpression(node)) target(node.expression);
    ts.forEachChild(node, visit);
  };
  for (const file of program.getSourceFiles()) if (files.includes(file.fileName)) visit(file);
  return found;
}

describe('request state', () => {
  const all = writes();

  it('is found: the scan sees the writes it must (a scan that finds nothing proves nothing)', () => {
    expect(all.some((w) => w.owner === 'Context.usage' && w.at.startsWith('src/proxy/stream-relay.ts'))).toBe(true);
    expect(all.some((w) => w.owner === 'Forwarding.filtered' && w.at.startsWith('src/output-rules/'))).toBe(true);
  });

  it('has an owner for every field', () => {
    const source = ts.createSourceFile(CONTEXT_FILE, ts.sys.readFile(CONTEXT_FILE)!, ts.ScriptTarget.ES2022, true);
    const missing: string[] = [];
    source.forEachChild((node) => {
      if (!ts.isClassDeclaration(node) || (node.name?.text !== 'Context' && node.name?.text !== 'Forwarding')) return;
      const owners = OWNERS[node.name.text as 'Context' | 'Forwarding'];
      for (const m of node.members) {
        if (!ts.isPropertyDeclaration(m) || !ts.isIdentifier(m.name)) continue;
        const readonly = m.modifiers?.some((x) => x.kind === ts.SyntaxKind.ReadonlyKeyword || x.kind === ts.SyntaxKind.PrivateKeyword);
        if (!readonly && owners[m.name.text] === undefined) missing.push(`${node.name.text}.${m.name.text}`);
      }
    });
    expect(missing).toEqual([]);
  });

  it('is written only by its owner (the class itself apart)', () => {
    const strays = all
      .filter((w) => !w.at.startsWith('src/pipeline/context.ts'))
      .filter((w) => OWNERS[w.owner.split('.')[0] as 'Context' | 'Forwarding'][w.field] !== w.writer)
      .map((w) => `${w.owner} written at ${w.at} (owner: ${OWNERS[w.owner.split('.')[0] as 'Context' | 'Forwarding'][w.field] ?? 'none'})`);
    expect(strays).toEqual([]);
  });
});
