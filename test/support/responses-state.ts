// Stored responses for the state tests: a record as the gateway would keep
// it (a one-message input, an assistant answer, the history of both), with
// ids from a counter so the tests can name them.
import { historyItems, inputItems } from '../../src/protocols/responses/items';
import type { StoreLimits, StoredResponse } from '../../src/responses-store/store';
import type { OutputMessage, ResponseObject, ResponseStatus } from '../../src/protocols/responses/types';

let n = 0;
const counter = (prefix: string): string => `${prefix}_${++n}`;

export function responseObject(id: string, status: ResponseStatus, output: OutputMessage[] = []): ResponseObject {
  return {
    id, object: 'response', created_at: 1_700_000_000, status, completed_at: status === 'completed' ? 1_700_000_001 : null,
    error: null, incomplete_details: null, output, usage: null, model: 'chat-a', store: true,
  };
}

/** A turn that asked `text` and got "answer: <text>"; `status` in_progress has no output yet. */
export function storedRecord(id: string, owner: string, text: string, status: ResponseStatus = 'completed'): StoredResponse {
  const request = { model: 'chat-a', input: text };
  const output: OutputMessage[] = status === 'in_progress' ? [] : [{
    id: counter('msg'), type: 'message', status: 'completed', role: 'assistant',
    content: [{ type: 'output_text', text: `answer: ${text}`, annotations: [], logprobs: [] }],
  }];
  const response = responseObject(id, status, output);
  return { owner, response, input: inputItems(request, counter), history: status === 'in_progress' ? [] : historyItems(request, response) };
}

/** A store's limits: a minute's TTL, 1 MB a response, 16 MB in all, owners unbounded but for what `limits` sets. */
export function storeLimits(limits: Partial<StoreLimits> = {}): StoreLimits {
  return { ttlMs: 60_000, maxResponseBytes: 1 << 20, maxBytes: 16 << 20, ownerMaxResponses: 1_000_000, ownerMaxBytes: 1 << 30, ...limits };
}
