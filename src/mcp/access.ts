// Which MCP servers and tools a key may use: its own `mcp` lists, else its
// org's, else none. A tool is named "<server>/<tool>"; both lists are globs,
// compiled once per key and config (a key's lists never change under one runtime).
//
//   keys:
//     - { id: ci-agent, sha256: ..., mcp: { servers: [github], tools: ["github/get_*", "github/search_code"] } }
import { compileGlobList, type Matcher } from '../auth/glob';
import type { Principal } from '../auth/keys';
import type { McpAccessConfig } from '../config/schema';

export interface McpAccess {
  /** The key may reach this server at all (list its tools, call the ones it may). */
  server(name: string): boolean;
  /** The key may call (and see in tools/list) this tool of this server. */
  tool(server: string, name: string): boolean;
}

const NONE: Matcher = () => false;
const listOrNone = (globs: readonly string[] | undefined): Matcher => (globs === undefined ? NONE : compileGlobList(globs));

export function compileAccess(config: McpAccessConfig | undefined): McpAccess {
  const servers = listOrNone(config?.servers);
  const tools = listOrNone(config?.tools);
  return {
    server: (name) => servers(name),
    tool: (server, name) => servers(server) && tools(`${server}/${name}`),
  };
}

const isAccess = (value: unknown): value is McpAccessConfig => value !== null && typeof value === 'object' && !Array.isArray(value);
/** A key's `mcp` that names either list: its lists replace its org's (one that sets only `limits` keeps the org's lists). */
const namesLists = (value: unknown): value is McpAccessConfig => isAccess(value) && (value.servers !== undefined || value.tools !== undefined);

/** Each key's access, compiled on its first MCP request under this config. */
export class AccessTable {
  private readonly compiled = new WeakMap<Principal, McpAccess>();

  /** `orgs`: each org's `mcp`, from the config in force. */
  constructor(private readonly orgs: Readonly<Record<string, { mcp?: McpAccessConfig }>>) {}

  of(principal: Principal): McpAccess {
    let access = this.compiled.get(principal);
    if (access === undefined) {
      // A runtime key's entry was checked by the admin API; anything else there is not a list.
      const own = principal.entry.mcp;
      const org = principal.org !== null && Object.hasOwn(this.orgs, principal.org) ? this.orgs[principal.org].mcp : undefined;
      access = compileAccess(namesLists(own) ? own : org);
      this.compiled.set(principal, access);
    }
    return access;
  }
}
