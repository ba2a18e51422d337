// The gateway's protected resources and where their metadata lives (RFC 9728).
// Each MCP endpoint is a resource of its own, named by the URL a client uses
// for it: `<resource>` for /mcp, `<resource>/<server>` for /mcp/<server>. Its
// metadata sits at the well-known path inserted between the origin and the
// resource's path (§3.1), so that the document's `resource` is the very URL
// the client asked (§3.3). Pure functions of the configured resource URL.
//
//   resource https://gw.example.com/mcp, server github:
//     resource  https://gw.example.com/mcp/github
//     metadata  https://gw.example.com/.well-known/oauth-protected-resource/mcp/github
export const WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface ResourceUrls {
  /** The resource identifier: what a token's `aud` names. */
  resource: string;
  /** Where its metadata is served: the `resource_metadata` of a challenge. */
  metadata: string;
}

/** The configured resource in its canonical form (lowercase scheme and host, no default port, no trailing slash), as tokens must name it. */
export function canonicalResource(configured: string): string {
  const url = new URL(configured);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The resource and metadata URLs of /mcp (`server` undefined) or of /mcp/`server`. `base`: canonicalResource's. */
export function resourceUrls(base: string, server?: string): ResourceUrls {
  const { origin, pathname } = new URL(base);
  const suffix = server === undefined ? '' : `/${server}`;
  return { resource: `${base}${suffix}`, metadata: `${origin}${WELL_KNOWN}${pathname}${suffix}` };
}

/** What a challenge says beyond where the metadata is (RFC 6750 §3): absent when no token was sent. */
export interface ChallengeError {
  error: 'invalid_token' | 'insufficient_scope';
  description: string;
}

/**
 * The WWW-Authenticate value of a refusal: `Bearer`, the metadata's URL, the
 * scopes to ask for, and the error when a token was sent. Every value here is
 * the gateway's own (configured URLs, validated scope names, fixed texts), so
 * nothing needs escaping inside the quotes.
 */
export function bearerChallenge(metadata: string, scope: string | undefined, error?: ChallengeError): string {
  let value = `Bearer resource_metadata="${metadata}"`;
  if (scope !== undefined && scope !== '') value += `, scope="${scope}"`;
  if (error !== undefined) value += `, error="${error.error}", error_description="${error.description}"`;
  return value;
}

/**
 * The MCP endpoint a metadata request is about: undefined for /mcp (and the
 * bare well-known path, the root document the MCP specification lets clients
 * fall back to), the server's name for /mcp/<server>, or null when the path
 * names no MCP endpoint. `path`: what follows WELL_KNOWN; `resourcePath`: the
 * configured resource's path, which a proxy in front may keep (/sluice/mcp) or
 * map to the gateway's own /mcp.
 */
export function metadataSubject(path: string, resourcePath: string, serverName: RegExp): string | undefined | null {
  if (path === '' || path === '/') return undefined;
  const rest = path.startsWith(`${resourcePath}`) ? path.slice(resourcePath.length) : path.startsWith('/mcp') ? path.slice(4) : null;
  if (rest === null) return null;
  if (rest === '') return undefined;
  const name = rest.slice(1);
  return rest[0] === '/' && serverName.test(name) ? name : null;
}
