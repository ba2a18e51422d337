// The items of stored responses, for `previous_response_id` and
// GET /v1/responses/{id}/input_items. A turn's items are its input, each with
// an id (a string input is one user message), then its output; a later turn
// that names it continues from them:
//
//   store(response.id, { input: inputItems(req), history: historyItems(req, response, earlier) });
//   toChat(next, { history: stored(next.previous_response_id).history });
//   GET …/input_items: inputItemsPage(stored(id).input, parseInputItemsQuery(req.query))
// OpenAI does not carry instructions over to a later turn, so neither list holds them.
import { z } from 'zod';
import { GatewayError } from '../../contract/errors';
import { parseBody } from '../../request/validate';
import { newId } from './output';
import type { InputItem, MessageItem, OutputItem, ResponsesRequest } from './types';

/** An item as stored and listed: its kind and id always set. */
export type StoredItem = (InputItem | OutputItem) & { id: string; type: string };

// The id prefixes of OpenAI's items; others get "item_".
const PREFIX: Record<string, string> = {
  message: 'msg', function_call: 'fc', function_call_output: 'fco', custom_tool_call: 'ctc', custom_tool_call_output: 'ctco', reasoning: 'rs', additional_tools: 'at',
};

/** A request's input as items with ids: a string is a user message; a message's string content becomes one text part. */
export function inputItems(req: ResponsesRequest, makeId: (prefix: string) => string = newId): StoredItem[] {
  if (req.input === undefined) return [];
  if (typeof req.input === 'string') {
    return [{ id: makeId('msg'), type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_text', text: req.input }] }];
  }
  return req.input.map((item): StoredItem => {
    const type = item.type ?? ('role' in item ? 'message' : 'item_reference');
    if (type !== 'message') return { ...item, type, id: item.id ?? makeId(Object.hasOwn(PREFIX, type) ? PREFIX[type] : 'item') };
    const m = item as MessageItem;
    const content = typeof m.content !== 'string' ? m.content
      : m.role === 'assistant' ? [{ type: 'output_text', text: m.content, annotations: [] }] : [{ type: 'input_text', text: m.content }];
    return { ...m, type: 'message', id: m.id ?? makeId('msg'), status: m.status ?? 'completed', content };
  });
}

/** What a later turn continues from: the items the earlier turns left, this turn's input, then its output. */
export function historyItems(req: ResponsesRequest, response: { output: readonly OutputItem[] }, earlier: readonly StoredItem[] = []): StoredItem[] {
  return [...earlier, ...inputItems(req), ...response.output];
}

export interface InputItemsQuery { after?: string; limit: number; order: 'asc' | 'desc' }

const DIGITS = /^[0-9]+$/;
const querySchema = z.looseObject({
  after: z.string().min(1).optional(),
  // A query string carries numbers as text: digits read as the number; anything else is refused as what it is.
  limit: z.preprocess((v) => (typeof v === 'string' && DIGITS.test(v) ? Number(v) : v), z.number().int().min(1).max(100)).optional(),
  order: z.enum(['asc', 'desc']).optional(),
});

/** The query of GET /v1/responses/{id}/input_items; OpenAI's defaults: 20 items, newest first. */
export function parseInputItemsQuery(query: unknown): InputItemsQuery {
  const q = parseBody(querySchema, query ?? {});
  return { after: q.after, limit: q.limit ?? 20, order: q.order ?? 'desc' };
}

export interface InputItemsList { object: 'list'; data: StoredItem[]; first_id: string | null; last_id: string | null; has_more: boolean }

/** One page of a response's input items, the list object OpenAI answers with. */
export function inputItemsPage(items: readonly StoredItem[], query: InputItemsQuery): InputItemsList {
  const ordered = query.order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (query.after !== undefined) {
    start = ordered.findIndex((item) => item.id === query.after) + 1;
    if (start === 0) throw new GatewayError('invalid_request', 'after must be the id of one of this response\'s input items.', { param: 'after' });
  }
  const data = ordered.slice(start, start + query.limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + data.length < ordered.length };
}
