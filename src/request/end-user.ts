// The end user a request is for, from what clients already send: chat
// completions' (and the other OpenAI endpoints') `user`, the Responses API's
// `safety_identifier` (or `user`), the Messages API's `metadata.user_id`, or
// the header the key's `endUsers.header` names, which comes first. Only a key
// whose entry has `endUsers` may name end users; on any other the fields are
// forwarded as they were and name no one. An id is a name, not a payload: 1
// to 128 letters, digits and . _ - @ : + = / ~ | #; anything else is a 400
// naming the field it came in.
import { GatewayError } from '../contract/errors';
import type { ClientProtocol, KeyEntry } from '../contract/types';

export const END_USER_MAX = 128;
const END_USER = /^[\p{L}\p{N}._\-@:+=/~|#]{1,128}$/u;

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** Where the body names its end user, by client protocol: the field's name (as a refusal's `param`) and its value. */
function fromBody(protocol: ClientProtocol, body: unknown): [string, unknown] | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  if (protocol === 'messages') {
    const metadata = b.metadata;
    const id = metadata !== null && typeof metadata === 'object' ? (metadata as Record<string, unknown>).user_id : undefined;
    return id == null ? undefined : ['metadata.user_id', id];
  }
  if (protocol === 'responses' && b.safety_identifier != null) return ['safety_identifier', b.safety_identifier];
  return b.user == null ? undefined : ['user', b.user];
}

function checked(param: string, value: unknown): string {
  if (typeof value === 'string' && END_USER.test(value)) return value;
  throw new GatewayError('invalid_request',
    `${param} must name the end user in 1 to ${END_USER_MAX} letters, digits or . _ - @ : + = / ~ | # (an id or a hash, not a name with spaces or markup).`, { param });
}

/** The request's end user, undefined when its key may not name one or it names none; throws a 400 on a bad one. */
export function endUserOf(entry: KeyEntry | undefined, protocol: ClientProtocol, body: unknown, headers: Headers): string | undefined {
  const allowed = entry?.endUsers;
  if (allowed === undefined) return undefined;
  if (allowed.header !== undefined) {
    const value = headers[allowed.header];
    if (value !== undefined) return checked(allowed.header, Array.isArray(value) ? value.join(',') : value);
  }
  const found = fromBody(protocol, body);
  return found === undefined ? undefined : checked(found[0], found[1]);
}
