// A verified access token as a principal, so the MCP lists apply to it as to a
// key: id `oauth:<sub>`, org from the org claim (only an org the config
// holds), and, when its `scope` claim holds scopes that mcp.oauth.scopes
// maps, their grants' union as its own `mcp` (else its org's, as for a key
// with none). No model may be used with it. Principals are kept per (sub,
// org, scopes), so a caller's lists are compiled once, not per request.
import type { JWTPayload } from 'jose';
import { principalOf, type Principal } from '../../auth/keys';
import type { McpAccessConfig, McpOAuthConfig } from '../../config/schema';
import { compileAccess, type McpAccess } from '../access';
import { TokenRefused } from './access-token';

/** A `sub` to log and compare: some text, no control character, bounded. */
const SUBJECT = /^[^\x00-\x1f\x7f]{1,256}$/;
const MOST_KEPT = 10_000;

export class TokenPrincipals {
  private readonly kept = new Map<string, Principal>();
  /** The mapped scopes each principal holds, for a challenge's `scope`. */
  private readonly held = new WeakMap<Principal, readonly string[]>();
  /** Each mapped scope's grant, compiled once: which scopes would open a server. */
  private readonly grants: ReadonlyArray<[string, McpAccess]>;

  constructor(private readonly config: McpOAuthConfig, private readonly orgs: ReadonlySet<string>) {
    this.grants = Object.entries(config.scopes).map(([scope, grant]) => [scope, compileAccess(grant)]);
  }

  /** The principal of a verified token's claims; a `sub` the gateway cannot use is the token's fault. */
  of(claims: JWTPayload): Principal {
    const sub = claims.sub;
    if (typeof sub !== 'string' || !SUBJECT.test(sub)) throw new TokenRefused('claims');
    const claimed = claims[this.config.orgClaim];
    const org = typeof claimed === 'string' && this.orgs.has(claimed) ? claimed : undefined;
    const scopes = this.mappedScopes(claims.scope);
    const id = JSON.stringify([sub, org ?? null, scopes]);
    let principal = this.kept.get(id);
    if (principal === undefined) {
      // A bound, not a cache policy: an issuer minting endless subjects costs a recompile, never memory.
      if (this.kept.size >= MOST_KEPT) this.kept.clear();
      principal = principalOf(`oauth:${sub}`, { ...(org !== undefined && { org }), models: [], ...(scopes.length > 0 && { mcp: this.union(scopes) }) });
      this.kept.set(id, principal);
      this.held.set(principal, scopes);
    }
    return principal;
  }

  /** A token principal's mapped scopes, and the scopes that would grant `server`; undefined for a key or when no scope grants it. */
  scopesFor(principal: Principal, server: string): string[] | undefined {
    const held = this.held.get(principal);
    if (held === undefined) return undefined;
    const granting = this.grants.filter(([, access]) => access.server(server)).map(([scope]) => scope);
    return granting.length === 0 ? undefined : [...new Set([...held, ...granting])];
  }

  /** The scopes of a `scope` claim (RFC 9068 §2.2.3: space-separated) that the config maps, sorted, once each. */
  private mappedScopes(claim: unknown): string[] {
    if (typeof claim !== 'string' || this.grants.length === 0) return [];
    return [...new Set(claim.split(' ').filter((s) => Object.hasOwn(this.config.scopes, s)))].sort();
  }

  private union(scopes: readonly string[]): McpAccessConfig {
    const grants = scopes.map((s) => this.config.scopes[s]);
    const servers = grants.flatMap((g) => g.servers ?? []);
    const tools = grants.flatMap((g) => g.tools ?? []);
    return { servers, tools };
  }
}
