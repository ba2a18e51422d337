// Who is calling /mcp: a gateway key, as on every route, or, with mcp.oauth
// set, an access token from the organisation's issuer (the MCP authorization
// specification's resource server). A bearer value that is a key is a key; one
// shaped as a JWS is verified as a token; anything else is refused as before.
// With mcp.oauth set, every refusal says where the resource's metadata is
// (WWW-Authenticate: Bearer resource_metadata=..., RFC 9728 §5.1), and a token
// that failed says invalid_token (RFC 6750 §3.1). The token itself goes no
// further than this file: the relay never forwards the client's Authorization.
//
//   mcp: { oauth: { issuer: https://login.example.com, jwksUrl: ..., resource: https://gw.example.com/mcp } }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate, authorizationOf, BEARER, type KeyIndex, type Principal } from '../../auth/keys';
import { MCP_SERVER_NAME, type McpOAuthConfig } from '../../config/schema';
import { GatewayError } from '../../contract/errors';
import { requestIdOf } from '../../pipeline/context';
import { sendJson } from '../../plumbing/send-json';
import { tokenVerifier, TokenRefused, type TokenFault, type TokenVerifier } from './access-token';
import { bearerChallenge, canonicalResource, metadataSubject, resourceUrls, WELL_KNOWN, type ChallengeError } from './resource';
import { TokenPrincipals } from './token-principal';
import { VerifiedTokens } from './verified-tokens';

/** A JWS in compact form (header.payload.signature; an unsigned one has an empty third part). Gateway keys have no dot. */
const JWS_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Each fault's text: the 401's message and its error_description (fixed texts: nothing the client sent). */
const FAULTS: Record<Exclude<TokenFault, 'unavailable'>, string> = {
  expired: 'The access token has expired. Get a new one from the authorization server.',
  not_yet_valid: 'The access token is not valid yet. Check the clocks, or get a new token.',
  issuer: 'The access token was not issued by the authorization server this gateway trusts.',
  audience: 'The access token was not issued for this resource. Ask the authorization server for a token with this resource as its resource parameter.',
  claims: 'The access token lacks a claim the gateway needs (exp, sub), or holds one it cannot use.',
  signature: 'The access token\'s signature could not be verified with the issuer\'s keys.',
  algorithm: 'The access token is signed with an algorithm the gateway does not accept.',
  malformed: 'The access token is not a well-formed JWT.',
};
const NOT_A_KEY = 'The bearer value is neither a key of this gateway nor a valid access token.';

export interface McpIdentity {
  /** The caller of /mcp (`server` undefined) or /mcp/`server`, or throws (a GatewayError: 401, or 503 when the issuer's keys cannot be had). */
  identify(keys: KeyIndex, req: IncomingMessage, server?: string): Principal | Promise<Principal>;
  /** For a caller refused a server: the 403 asking for a scope that grants it, when a token's scopes could; else undefined (the usual 404). */
  insufficientScope(principal: Principal, server: string): GatewayError | undefined;
  /** GET /.well-known/oauth-protected-resource[/<path>]: the metadata, or `next` (a 404) when mcp.oauth is not set or the path names no endpoint. */
  serveMetadata(req: IncomingMessage & { url: string }, res: ServerResponse, next: () => void): void;
}

/** Keys only, as on every other route. */
const KEYS_ONLY: McpIdentity = {
  identify: (keys, req) => authenticate(keys, authorizationOf(req)),
  insufficientScope: () => undefined,
  serveMetadata: (_req, _res, next) => next(),
};

export function mcpIdentity(config: McpOAuthConfig | undefined, orgs: Readonly<Record<string, unknown>>): McpIdentity {
  return config === undefined ? KEYS_ONLY : new TokenIdentity(config, new Set(Object.keys(orgs)), tokenVerifier(config));
}

class TokenIdentity implements McpIdentity {
  private readonly base: string;
  /** The path of the configured resource (/mcp, or a proxy's /prefix/mcp), as metadata paths may carry it. */
  private readonly basePath: string;
  private readonly principals: TokenPrincipals;
  private readonly verified = new VerifiedTokens();
  /** The challenge's scope hint: the scopes clients may ask for. */
  private readonly scope: string | undefined;
  private readonly metadataFields: Record<string, unknown>;

  constructor(config: McpOAuthConfig, orgs: ReadonlySet<string>, private readonly verifier: TokenVerifier) {
    this.base = canonicalResource(config.resource);
    this.basePath = new URL(this.base).pathname;
    this.principals = new TokenPrincipals(config, orgs);
    const scopes = config.scopesSupported ?? Object.keys(config.scopes);
    this.scope = scopes.length === 0 ? undefined : scopes.join(' ');
    this.metadataFields = {
      authorization_servers: config.authorizationServers ?? [config.issuer],
      ...(scopes.length > 0 && { scopes_supported: scopes }),
      bearer_methods_supported: ['header'],
      resource_name: config.resourceName ?? 'Sluice MCP gateway',
    };
  }

  identify(keys: KeyIndex, req: IncomingMessage, server?: string): Principal | Promise<Principal> {
    let header: string | undefined;
    try {
      header = authorizationOf(req);
      return authenticate(keys, header);
    } catch (err) {
      const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
      if (token !== undefined && JWS_SHAPE.test(token)) {
        const endpoint = server !== undefined && MCP_SERVER_NAME.test(server) ? server : '';
        return this.verified.get(endpoint, token) ?? this.verify(token, endpoint);
      }
      throw this.unauthorized((err as Error).message, server, token === undefined ? undefined : NOT_A_KEY);
    }
  }

  insufficientScope(principal: Principal, server: string): GatewayError | undefined {
    const scopes = this.principals.scopesFor(principal, server);
    if (scopes === undefined) return undefined;
    const description = 'The access token lacks a scope this MCP server needs. Authorize again with the scopes named here.';
    const challenge = bearerChallenge(this.urls(server).metadata, scopes.join(' '), { error: 'insufficient_scope', description });
    return new GatewayError('insufficient_scope', description, { headers: { 'www-authenticate': challenge } });
  }

  serveMetadata(req: IncomingMessage & { url: string }, res: ServerResponse, next: () => void): void {
    const path = req.url.split('?')[0].slice(WELL_KNOWN.length);
    const subject = metadataSubject(path, this.basePath, MCP_SERVER_NAME);
    if (subject === null) return next();
    requestIdOf(req, res);
    // Public and the same for everyone: browsers' clients may read it too.
    sendJson(res, 200, { resource: this.urls(subject).resource, ...this.metadataFields }, { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' });
  }

  /** `endpoint`: a server's name, or '' for /mcp (and a path segment that names no server). */
  private async verify(token: string, endpoint: string): Promise<Principal> {
    try {
      // Audiences: this endpoint's own resource, or the whole gateway's (a token for every server).
      const claims = await this.verifier.verify(token, endpoint === '' ? [this.base] : [this.base, `${this.base}/${endpoint}`]);
      const principal = this.principals.of(claims);
      this.verified.set(endpoint, token, principal, claims.exp!);
      return principal;
    } catch (err) {
      const fault = err instanceof TokenRefused ? err.fault : 'unavailable';
      if (fault === 'unavailable') {
        throw new GatewayError('identity_unavailable', 'The gateway could not check the access token: the issuer\'s keys could not be fetched. Try again shortly.', { headers: { 'retry-after': '5' } });
      }
      throw this.unauthorized(FAULTS[fault], endpoint === '' ? undefined : endpoint, FAULTS[fault]);
    }
  }

  /** A 401 naming the metadata; `failed`: the description of a token (or key) that was sent and refused. */
  private unauthorized(message: string, server: string | undefined, failed: string | undefined): GatewayError {
    const error: ChallengeError | undefined = failed === undefined ? undefined : { error: 'invalid_token', description: failed };
    return new GatewayError('unauthorized', message, { headers: { 'www-authenticate': bearerChallenge(this.urls(server).metadata, this.scope, error) } });
  }

  /** /mcp's URLs, or a server's when its name is one (a hostile path segment gets /mcp's, never an echo). */
  private urls(server: string | undefined) {
    return resourceUrls(this.base, server !== undefined && MCP_SERVER_NAME.test(server) ? server : undefined);
  }
}
