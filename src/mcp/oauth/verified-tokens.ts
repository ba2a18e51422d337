// Tokens already verified, so a client that sends the same token on every
// request of its session pays for one signature check, not one per request
// (about 150 µs of CPU each, RS256 or ES256). An entry is the principal a
// token proved for one endpoint's audiences, kept until the token's own `exp`:
// what a JWT says cannot change before then, and the issuer's key set is kept
// as long by the verifier anyway. Bounded: a full table starts again empty,
// and only tokens that passed every check get in.
import type { Principal } from '../../auth/keys';

const MOST_KEPT = 4_096;
/** A longer token is verified each time: the table stays within MOST_KEPT × this (16 MiB at worst). */
const LONGEST_KEPT = 4_096;

export class VerifiedTokens {
  private readonly kept = new Map<string, { principal: Principal; until: number }>();

  /** The principal `token` proved on `endpoint` (a server's name, or '' for /mcp), while its exp has not passed. */
  get(endpoint: string, token: string, now = Date.now()): Principal | undefined {
    const id = `${endpoint}\n${token}`;
    const entry = this.kept.get(id);
    if (entry === undefined) return undefined;
    if (now < entry.until) return entry.principal;
    this.kept.delete(id);
    return undefined;
  }

  /** Keeps a verified token's principal until `exp` (seconds since the epoch, as the claim). */
  set(endpoint: string, token: string, principal: Principal, exp: number): void {
    if (token.length > LONGEST_KEPT) return;
    if (this.kept.size >= MOST_KEPT) this.kept.clear();
    this.kept.set(`${endpoint}\n${token}`, { principal, until: exp * 1000 });
  }
}
