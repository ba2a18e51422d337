// An access token from the organisation's issuer, checked as OAuth 2.1 (§5.2)
// and the MCP authorization specification ask of a resource server: a JWS
// signed by one of the issuer's keys with an allowed algorithm, its `iss`, its
// `aud` one of this resource's identifiers (RFC 8707), its `exp` in the
// future. The key set is fetched through jose's remote set: cached, shared by
// concurrent requests, refetched for a key id it does not hold at most once
// per cooldown, each fetch bounded by jwksTimeoutMs.
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import type { McpOAuthConfig } from '../../config/schema';

/** Why a token was refused (each has a fixed description), or `unavailable`: the key set could not be had, so nothing was decided. */
export type TokenFault = 'expired' | 'not_yet_valid' | 'issuer' | 'audience' | 'claims' | 'signature' | 'algorithm' | 'malformed' | 'unavailable';

export class TokenRefused extends Error {
  constructor(readonly fault: TokenFault) {
    super(fault);
  }
}

/**
 * What a verification error means: a fault of the token (401), or a key set
 * that could not be fetched or read (503: the client's token may be good).
 * A pure function of the error, table-tested.
 */
export function tokenFault(err: unknown): TokenFault {
  if (err instanceof errors.JWTExpired) return 'expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf' || err.claim === 'iat') return 'not_yet_valid';
    if (err.claim === 'iss') return 'issuer';
    if (err.claim === 'aud') return 'audience';
    return 'claims';
  }
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return 'signature';
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return 'algorithm';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JWKInvalid) return 'malformed';
  // The rest is the key set's: a timeout, a refused connection, a non-200 answer, a body that is not a key set.
  return 'unavailable';
}

export interface TokenVerifier {
  /** The token's claims, or throws TokenRefused. `audiences`: any one of them will do. */
  verify(token: string, audiences: readonly string[]): Promise<JWTPayload>;
}

export function tokenVerifier(config: McpOAuthConfig): TokenVerifier {
  const keys = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: config.jwksTimeoutMs });
  const options = {
    issuer: config.issuer,
    algorithms: [...config.algorithms],
    clockTolerance: config.clockToleranceSeconds,
    // jose checks exp only when present: a token without one would never expire.
    requiredClaims: ['exp', 'sub'],
  };
  return {
    async verify(token, audiences) {
      try {
        return (await jwtVerify(token, keys, { ...options, audience: audiences as string[] })).payload;
      } catch (err) {
        throw new TokenRefused(tokenFault(err));
      }
    },
  };
}
