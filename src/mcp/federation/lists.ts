// One page of a merged list on the federated /mcp: the servers the key may
// use, in the config's order, each read in its own pages; a page holds what
// one or more servers gave until it has something, and its cursor says where
// to go on (the server, and that server's own cursor).
import type { ListPosition } from './names';

/** The lists the federated endpoint merges: where each answer keeps its items, and the capability a server declares for them. */
export const LISTS: Readonly<Record<string, { field: string; capability: string }>> = {
  'tools/list': { field: 'tools', capability: 'tools' },
  'prompts/list': { field: 'prompts', capability: 'prompts' },
  'resources/list': { field: 'resources', capability: 'resources' },
  'resources/templates/list': { field: 'resourceTemplates', capability: 'resources' },
};

/** One server's page: its items as the client sees them, and its own cursor when it has more. */
export interface ServerPage {
  items: unknown[];
  next?: string;
}

/** Reads one page of one server; undefined when the server could not be read (it is left out of the list). */
export type PageReader = (server: string, cursor: string | undefined) => Promise<ServerPage | undefined>;

// A server that answers empty pages with a cursor cannot keep a request here for ever.
const MAX_EMPTY_PAGES = 16;

/** The next page from `start` (the beginning when undefined); `servers` are those the key may use, in order. */
export async function mergedPage(servers: readonly string[], start: ListPosition | undefined, read: PageReader): Promise<{ items: unknown[]; next?: ListPosition }> {
  let index = start === undefined ? 0 : servers.indexOf(start.server);
  let cursor = start?.cursor;
  const items: unknown[] = [];
  for (let pages = 0; index < servers.length && pages < servers.length + MAX_EMPTY_PAGES; pages++) {
    const page = await read(servers[index], cursor);
    if (page !== undefined) items.push(...page.items);
    if (page?.next !== undefined) cursor = page.next;
    else {
      index += 1;
      cursor = undefined;
    }
    if (items.length > 0) break;
  }
  if (index >= servers.length) return { items };
  return { items, next: cursor === undefined ? { server: servers[index] } : { server: servers[index], cursor } };
}
