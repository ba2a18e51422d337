// The stored-response endpoints as plain functions: each takes the store,
// the caller's owner (ownerOf(principal)) and the id from the path, and
// returns the JSON body or throws a GatewayError for the error handler.
//
//   GET    /v1/responses/{id}               getResponse(store, owner, id, req.query)
//   DELETE /v1/responses/{id}               deleteResponse(store, owner, id)
//   GET    /v1/responses/{id}/input_items   listInputItems(store, owner, id, req.query)
//   POST   /v1/responses/{id}/cancel        cancelResponse(state, owner, id)
import { GatewayError } from '../contract/errors';
import { inputItemsPage, parseInputItemsQuery, type InputItemsList } from '../protocols/responses/items';
import type { ResponseObject } from '../protocols/responses/types';
import { findResponse, responseNotFound } from './resolve';
import type { RunningResponses } from './running';
import { isResponseId, type ResponseStore, type StoredResponse } from './store';

export interface DeletedResponse { id: string; object: 'response.deleted'; deleted: true }

/** The response as stored: final, or `in_progress` while it runs. */
export async function getResponse(store: ResponseStore, owner: string, id: string, query: unknown = {}): Promise<ResponseObject> {
  // OpenAI's stream=true replays a background response's events; the gateway keeps the response, not its events.
  const stream = (query as { stream?: unknown } | null)?.stream;
  if (stream === 'true' || stream === true) {
    throw new GatewayError('invalid_request', 'stream=true is not supported here: the gateway keeps the response, not its events. Leave stream out to get the response.', { param: 'stream' });
  }
  return (await findResponse(store, owner, id)).response;
}

/** Deleted only when `owner` stored it: the store checks the owner in the delete itself. */
export async function deleteResponse(store: ResponseStore, owner: string, id: string): Promise<DeletedResponse> {
  if (!isResponseId(id) || !await store.delete(id, owner)) throw responseNotFound(id, 'response_id');
  return { id, object: 'response.deleted', deleted: true };
}

export async function listInputItems(store: ResponseStore, owner: string, id: string, query: unknown): Promise<InputItemsList> {
  const q = parseInputItemsQuery(query);
  return inputItemsPage((await findResponse(store, owner, id)).input, q);
}

export interface CancelOptions {
  /** How long to wait for the request running it to store its end; then it is taken as gone and marked cancelled here. */
  waitMs?: number;
}

const CANCEL_WAIT_MS = 2_000;
const ended = (record: StoredResponse): boolean => record.response.status !== 'in_progress';

/**
 * Cancels a response that is still running, wherever it runs, and answers
 * with it as it ended (status `cancelled`); one that has ended is answered
 * as stored, unchanged (OpenAI's cancel of a finished response).
 */
export async function cancelResponse(state: { store: ResponseStore; running: RunningResponses }, owner: string, id: string, options: CancelOptions = {}): Promise<ResponseObject> {
  const { store, running } = state;
  const record = await findResponse(store, owner, id);
  if (ended(record)) return record.response;
  await running.cancel(id);
  const deadline = Date.now() + (options.waitMs ?? CANCEL_WAIT_MS);
  for (let delay = 10; Date.now() < deadline; delay = Math.min(delay * 2, 200)) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(deadline - Date.now(), 0))));
    const now = await findResponse(store, owner, id);
    if (ended(now)) return now.response;
  }
  // Nothing ended it: the process that ran it is gone. It will never end now, so it ends here.
  const cancelled: StoredResponse = { ...record, response: { ...record.response, status: 'cancelled' } };
  await store.put(id, cancelled);
  return cancelled.response;
}
