// The loader hook fs-glob-hook.mjs registers: 'fs' and 'node:fs' imported
// from the conformance package resolve to fs-glob-shim.mjs.
const SHIM = new URL('./fs-glob-shim.mjs', import.meta.url).href;
const FROM = '/@modelcontextprotocol/conformance/';

export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes(FROM)) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
