// mcp.oauth: the organisation's authorization server, whose access tokens the
// gateway accepts on /mcp beside its own keys (docs/mcp.md#identity). A leaf
// like schema.ts; what a scope grants is schema.ts's MCP access shape, handed in.
//
//   mcp:
//     oauth:
//       issuer: https://login.example.com
//       jwksUrl: https://login.example.com/.well-known/jwks.json
//       resource: https://gw.example.com/mcp
//       scopes: { "mcp:github": { servers: [github], tools: ["github/*"] } }
import { z } from 'zod';
import { intLike } from './values';

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** An https URL, or http on a loopback host (a local issuer, the tests): a token's keys must not travel in the clear. */
const secureUrl = z.string().refine((value) => {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}, 'must be an https:// URL (http:// only on 127.0.0.1, [::1] or localhost)');

/** The gateway's MCP endpoint as clients reach it: the audience its tokens must carry, so no query, no fragment, and the path ends in /mcp. */
const resourceUrl = secureUrl.refine((value) => {
  const url = new URL(value);
  return url.search === '' && url.hash === '' && !value.includes('#') && !value.includes('?') && url.pathname.endsWith('/mcp');
}, 'must be the URL clients use for the gateway\'s /mcp, with no query or fragment (e.g. https://gw.example.com/mcp)');

/** A scope as OAuth 2.0 defines its tokens (RFC 6749 §3.3): printable ASCII, no space, quote or backslash. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;
const SCOPE_RULE = 'must be an OAuth scope: 1-128 printable ASCII characters, no space, " or \\';
const scopeToken = z.string().regex(SCOPE, SCOPE_RULE);

/** Signatures the gateway checks: public-key ones only (it holds no shared secret, and "none" is no signature). */
export const TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export const mcpOAuthSchema = <G extends z.ZodType>(grant: G) => z.strictObject({
  /** The `iss` every token must carry. */
  issuer: secureUrl,
  /** The issuer's signing keys (a JWK Set), fetched on the first token and then rarely (cached; refetched for a key id it does not hold). */
  jwksUrl: secureUrl,
  resource: resourceUrl,
  /** Named in the metadata, for clients to find where to get a token; default: the issuer. */
  authorizationServers: z.array(secureUrl).min(1).optional(),
  resourceName: z.string().min(1).max(200).optional(),
  algorithms: z.array(z.enum(TOKEN_ALGORITHMS)).min(1).default(['RS256', 'ES256']),
  clockToleranceSeconds: intLike(0, 600).default(30),
  /** The claim naming the caller's org: its `mcp` lists apply, as to the org's keys. */
  orgClaim: z.string().min(1).max(100).default('org'),
  /** What each scope of a token's `scope` claim grants, as a key's `mcp` does: a token with any of them uses their union instead of its org's. */
  scopes: z.record(z.string(), grant).default({}).superRefine((scopes, ctx) => {
    // Checked here rather than as the record's key schema, so the problem names the entry and says why.
    for (const name of Object.keys(scopes)) if (!SCOPE.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: SCOPE_RULE });
  }),
  /** Listed in the metadata for clients to ask for; default: the names under `scopes`. */
  scopesSupported: z.array(scopeToken).optional(),
  /** The longest wait for the key set; past it, a token is answered 503, never held. */
  jwksTimeoutMs: intLike(100, 60_000).default(5_000),
});
