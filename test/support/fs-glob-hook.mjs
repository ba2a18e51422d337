// Node 20 lacks fs.globSync (added in Node 22), which the MCP conformance
// CLI imports by name at load: without it the CLI cannot start. Registered
// with `node --import`, this sends the CLI's own imports of 'fs' to a module
// that re-exports node:fs plus a globSync (fs-glob-shim.mjs). Nothing else
// is redirected, and on a Node that has fs.globSync nothing is.
//   node --import ./test/support/fs-glob-hook.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js server --url ...
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') register('./fs-glob-resolve.mjs', import.meta.url);
