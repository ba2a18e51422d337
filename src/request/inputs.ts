// The request view of an input endpoint (embeddings, rerank, score,
// moderations): the body as the backend gets it, the texts in its text
// fields (each input and document its own text, as each message is for
// chat), and the token ids it gives; checked against the endpoint's limits
// once, at the edge. A rewrite of the texts (redaction) makes the view again.
//
//   const view = inputsView(body.model, body, ['query', 'documents'], ['documents'], limits.rerank);
import { GatewayError } from '../contract/errors';
import type { InputLimits } from '../config/endpoint-limits-schema';
import type { InputsRequest } from '../contract/types';
import { rewriteStrings, type Rewrite } from './rewrite-strings';

/** What a field holds: its texts, its token ids, its characters (a token id counts as one) and its items. */
interface FieldSize {
  chars: number;
  tokenIds: number;
  items: number;
}

/** An array of numbers is one input given as token ids; any other array is a list of inputs. */
const isTokenArray = (v: unknown[]): boolean => v.length > 0 && typeof v[0] === 'number';

function measure(value: unknown, texts: string[], size: FieldSize, depth: number): void {
  if (typeof value === 'string') {
    texts.push(value);
    size.chars += value.length;
  } else if (typeof value === 'number') {
    size.tokenIds++;
    size.chars++;
  } else if (Array.isArray(value)) {
    for (const item of value) measure(item, texts, size, depth + 1);
  } else if (value !== null && typeof value === 'object' && depth < 4) {
    for (const key in value) measure((value as Record<string, unknown>)[key], texts, size, depth + 1);
  }
}

function texted(model: string, body: Readonly<Record<string, unknown>>, fields: readonly string[]): { view: InputsRequest; sizes: FieldSize[] } {
  const texts: string[] = [];
  let tokenIds = 0;
  const sizes = fields.map((field) => {
    const value = body[field];
    const size: FieldSize = { chars: 0, tokenIds: 0, items: Array.isArray(value) && !isTokenArray(value) ? value.length : value === undefined ? 0 : 1 };
    measure(value, texts, size, 0);
    tokenIds += size.tokenIds;
    return size;
  });
  return { view: { model, body, fields, texts, tokenIds }, sizes };
}

/**
 * The view of a valid body: `fields` hold its texts, `lists` are those whose
 * items are inputs counted against maxInputs. Past a limit, a 400 names the
 * field that went over it.
 */
export function inputsView(model: string, body: Readonly<Record<string, unknown>>, fields: readonly string[], lists: readonly string[], limits: InputLimits): InputsRequest {
  const { view, sizes } = texted(model, body, fields);
  let chars = 0;
  fields.forEach((field, i) => {
    if (lists.includes(field) && sizes[i].items > limits.maxInputs) {
      throw new GatewayError('invalid_request', `${field} has ${sizes[i].items} items; at most ${limits.maxInputs} are accepted in one request. Send them in several requests.`, { param: field });
    }
    chars += sizes[i].chars;
    if (chars > limits.maxChars) {
      throw new GatewayError('invalid_request', `${field} takes the request past ${limits.maxChars} characters of text. Send shorter texts, or fewer in one request.`, { param: field });
    }
  });
  return view;
}

/** The view with every text rewritten through `fn`; undefined when none changed. */
export function rewriteInputs(inputs: InputsRequest, fn: Rewrite): InputsRequest | undefined {
  let body: Record<string, unknown> | undefined;
  for (const field of inputs.fields) {
    const value = inputs.body[field];
    // Every string of a text field is text (a document's `text` too): nothing in them is a name.
    const next = rewriteStrings(value, fn, true);
    if (next !== value) (body ??= { ...inputs.body })[field] = next;
  }
  return body === undefined ? undefined : texted(inputs.model, body, inputs.fields).view;
}
