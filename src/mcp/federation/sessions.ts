// The federated /mcp's sessions: what the client said at initialize (its
// version, capabilities and name), which key began the session, and the
// session the gateway holds with each server it has used. In Redis when the
// config names it, so a session begun on one replica continues on any other
// and outlives the replica that began it; else in this process's memory.
// A session idle for `idleMs` is forgotten (the client begins a new one on
// the 404 that follows, as the transport specifies).
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../redis/client';
import type { UpstreamSession } from '../relay';

export interface FederatedSession {
  id: string;
  /** The id of the key that began it: no other key may use it. */
  owner: string;
  version: string;
  clientInfo: unknown;
  capabilities: unknown;
  /** The gateway's session with each server used so far, with the capabilities that server declared. */
  upstreams: Record<string, UpstreamState>;
}

export interface UpstreamState extends UpstreamSession {
  capabilities: string[];
}

export interface SessionStore {
  create(session: FederatedSession): Promise<void>;
  get(id: string): Promise<FederatedSession | undefined>;
  /** Records (or, with undefined, forgets) the gateway's session with one server. */
  setUpstream(id: string, server: string, upstream: UpstreamState | undefined): Promise<void>;
  delete(id: string): Promise<void>;
}

/** 32 random bytes: the session id is all that binds a request to a session, beside the key. */
export const newSessionId = (): string => randomBytes(32).toString('base64url');

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
export const isSessionId = (id: string): boolean => SESSION_ID.test(id);

const META = 'meta';
const UP = 'up:';

/** Sessions in Redis: one hash a session, its idle time renewed on every read. */
export class RedisSessionStore implements SessionStore {
  constructor(private readonly redis: RedisClient, private readonly prefix: string, private readonly idleMs: number) {}

  private key(id: string): string {
    return `${this.prefix}mcp:session:${id}`;
  }

  async create(session: FederatedSession): Promise<void> {
    const { upstreams: _upstreams, ...meta } = session;
    await this.redis.multi().hset(this.key(session.id), META, JSON.stringify(meta)).pexpire(this.key(session.id), this.idleMs).exec();
  }

  async get(id: string): Promise<FederatedSession | undefined> {
    const key = this.key(id);
    const [[, fields]] = (await this.redis.multi().hgetall(key).pexpire(key, this.idleMs).exec()) as [[unknown, Record<string, string>]];
    if (fields === null || fields[META] === undefined) return undefined;
    const upstreams: Record<string, UpstreamState> = {};
    for (const [field, value] of Object.entries(fields)) {
      if (field.startsWith(UP)) upstreams[field.slice(UP.length)] = JSON.parse(value) as UpstreamState;
    }
    return { ...(JSON.parse(fields[META]) as Omit<FederatedSession, 'upstreams'>), upstreams };
  }

  async setUpstream(id: string, server: string, upstream: UpstreamState | undefined): Promise<void> {
    const key = this.key(id);
    if (upstream === undefined) await this.redis.hdel(key, `${UP}${server}`);
    // Only into a session still there: one deleted meanwhile stays deleted.
    else if (await this.redis.hexists(key, META)) await this.redis.hset(key, `${UP}${server}`, JSON.stringify(upstream));
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }
}

/** Sessions in this process: at most `max`, the least recently used let go first. */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, { session: FederatedSession; used: number }>();

  constructor(private readonly idleMs: number, private readonly max = 10_000) {}

  async create(session: FederatedSession): Promise<void> {
    this.sweep();
    this.sessions.set(session.id, { session, used: Date.now() });
  }

  async get(id: string): Promise<FederatedSession | undefined> {
    const entry = this.sessions.get(id);
    if (entry === undefined || Date.now() - entry.used > this.idleMs) return undefined;
    // Kept in order of use: the first in the map is the least recently used.
    this.sessions.delete(id);
    entry.used = Date.now();
    this.sessions.set(id, entry);
    return structuredClone(entry.session);
  }

  async setUpstream(id: string, server: string, upstream: UpstreamState | undefined): Promise<void> {
    const entry = this.sessions.get(id);
    if (entry === undefined) return;
    if (upstream === undefined) delete entry.session.upstreams[server];
    else entry.session.upstreams[server] = upstream;
  }

  async delete(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.sessions) {
      if (now - entry.used <= this.idleMs && this.sessions.size < this.max) break;
      this.sessions.delete(id);
    }
  }
}
