// Whether a request goes on to one of its route's fallback models, and to
// which: one pure function of the facts, table-tested. The chain
// (forward.ts) gathers them and carries the answer out.
//
//   decideFallback({ when: 'before', err: <a 502>, left: [{ id: 'small', routed: true, allowed: true, dialectFits: true, ... }], ... })
//     -> 0 (the first fallback answers instead)
import { isGatewayError } from '../contract/errors';

/** One remaining fallback model, with what decides whether it may take the request. */
export interface FallbackOption {
  id: string;
  /** A route serves it for this endpoint and version. */
  routed: boolean;
  /** The request's key may use it. */
  allowed: boolean;
  /** Its route takes the request's messages (a request in OpenAI's dialect needs a route in it). */
  dialectFits: boolean;
  /** Its route continues an assistant message, on an upstream of format openai. */
  continues: boolean;
}

export interface FallbackFacts {
  /** before: nothing reached the client yet; cut: a stream was cut after content was sent. */
  when: 'before' | 'cut';
  err: unknown;
  /** The route's failoverOn: backend codes of a 4xx that also fall back. */
  failoverOn: readonly string[];
  clientGone: boolean;
  /** cut: the route continues cut streams and this request still may be (once, one choice of text). */
  mayContinue: boolean;
  /** cut: the text relayed so far. */
  relayed: string | undefined;
  /** The fallbacks not yet passed over, in order. */
  left: readonly FallbackOption[];
}

/** Failures of a stream under way that a fallback could make good: cut, broken off with an error event, or stalled. */
const CUT = new Set(['upstream_error', 'upstream_timeout']);

/**
 * Failures that say the backends could not answer, not that the request is
 * wrong: a fallback may. A 4xx only with a code the route names (failoverOn);
 * a 429 from the backend, or while it asked to wait.
 */
function fallsBack(err: unknown, failoverOn: readonly string[]): boolean {
  if (!isGatewayError(err)) return false;
  switch (err.reason) {
    case 'upstream_error':
    case 'upstream_unavailable':
    case 'upstream_timeout': return true;
    case 'rate_limited': return err.details?.scope === 'backend';
    case 'upstream_rejected': return err.status === 429 || (err.details?.backendCode !== undefined && failoverOn.includes(err.details.backendCode));
    default: return false;
  }
}

/** The index in `left` of the fallback that takes the request (those before it are passed over for good), or -1 for none. */
export function decideFallback(f: FallbackFacts): number {
  if (f.clientGone) return -1;
  if (f.when === 'before') {
    if (!fallsBack(f.err, f.failoverOn)) return -1;
    return f.left.findIndex((o) => o.routed && o.allowed && o.dialectFits);
  }
  if (!f.mayContinue || f.relayed === undefined || f.relayed === '' || !isGatewayError(f.err) || !CUT.has(f.err.reason)) return -1;
  return f.left.findIndex((o) => o.routed && o.continues && o.allowed);
}
