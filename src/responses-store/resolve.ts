// Finding a stored response under the caller's owner only. Another owner's
// response reads as absent: 404, the same answer as an id that never
// existed, whether it is read, listed, deleted, cancelled or continued from;
// so does a relayed response's id the gateway did not give the caller's
// owner, and it never reaches a backend.
import { GatewayError } from '../contract/errors';
import type { StoredItem } from '../protocols/responses/items';
import { isResponseId, type ResponseStore, type StoredResponse } from './store';

/** The 404 for a response the caller cannot see; an id that is not one is not echoed. */
export function responseNotFound(id: string, param: string, what = 'Response'): GatewayError {
  const shown = isResponseId(id) ? `'${id}'` : 'given';
  return new GatewayError('not_found', `${what} with id ${shown} not found.`, { param });
}

/** The record of `id` if `owner` stored it, else the 404 (`param` names where the id came from). */
export async function findResponse(store: ResponseStore, owner: string, id: string, param = 'response_id'): Promise<StoredResponse> {
  const record = isResponseId(id) ? await store.get(id, owner) : undefined;
  if (record === undefined) throw responseNotFound(id, param, param === 'previous_response_id' ? 'Previous response' : 'Response');
  return record;
}

/** `previous_response_id`: the items the next turn continues from (pass them to toChat's history). */
export async function continueFrom(store: ResponseStore, owner: string, previousResponseId: string): Promise<StoredItem[]> {
  const record = await findResponse(store, owner, previousResponseId, 'previous_response_id');
  if (record.response.status === 'in_progress') {
    throw new GatewayError('invalid_request', `Previous response with id '${previousResponseId}' is still in progress: continue from it once it has ended.`, { param: 'previous_response_id' });
  }
  return record.history;
}

/**
 * `previous_response_id` on a relayed route when the gateway keeps no
 * responses (the backend resolves it): passes only an id the gateway relayed
 * to `owner`, else the 404 of an unknown id.
 */
export async function relayedTo(state: { owns(id: string, owner: string): Promise<boolean> }, owner: string, previousResponseId: string): Promise<void> {
  if (!isResponseId(previousResponseId) || !await state.owns(previousResponseId, owner)) {
    throw responseNotFound(previousResponseId, 'previous_response_id', 'Previous response');
  }
}
