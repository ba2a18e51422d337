// A team made through the admin API, as it is stored (one JSON record per
// team, beside the runtime keys: in Redis or in the keys file) and as the API
// shows it. A config file's team is shown the same way, read only.
//
//   {"name":"search","entry":{"org":"acme","models":["chat-*"],"limits":{"tokens":200000}},"createdAt":"…","updatedAt":"…"}
import { z } from 'zod';
import { TEAM_NAME } from '../config/schema';

export interface TeamEntry {
  org: string;
  models?: string[];
  limits?: Record<string, unknown>;
}

export interface StoredTeam {
  name: string;
  entry: TeamEntry;
  createdAt: string;
  updatedAt: string;
}

const instant = z.iso.datetime();

/** A record read back from a store: written by the gateway, checked all the same (a file can be edited by hand). */
const storedTeamSchema = z.strictObject({
  name: z.string().regex(TEAM_NAME),
  entry: z.strictObject({ org: z.string().min(1), models: z.array(z.string().min(1)).optional(), limits: z.record(z.string(), z.unknown()).optional() }),
  createdAt: instant,
  updatedAt: instant,
});

export function decodeStoredTeam(value: unknown): StoredTeam | undefined {
  const parsed = storedTeamSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export function parseStoredTeam(text: string): StoredTeam | undefined {
  try {
    return decodeStoredTeam(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** A team as the admin API shows it; `keys`: how many keys name it. */
export function teamView(name: string, entry: TeamEntry, source: 'config' | 'runtime', keys: number, times?: Pick<StoredTeam, 'createdAt' | 'updatedAt'>): Record<string, unknown> {
  return { name, source, org: entry.org, models: entry.models ?? null, limits: entry.limits ?? null, keys, ...(times && { createdAt: times.createdAt, updatedAt: times.updatedAt }) };
}
