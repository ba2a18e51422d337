// What the gateway keeps of Responses API turns: the store (memory, the
// primary's for the workers, Redis for the replicas), the responses running
// here, and the endpoints that read them. Wiring, in short:
//
//   const responses = new ResponseState({ services, logger });  // once per process
//   responses.apply(config);                                     // at start and on each reload
//   const owner = ownerOf(principal);
//   history = await continueFrom(responses.store, owner, req.previous_response_id);
//   await relayedTo(responses, owner, req.previous_response_id);   // kept by a native backend instead
//   void responses.remember(backendId, owner, requestId);           // its id, as relayed
//   responses.running.add(id, { cancel }); void responses.save(id, inProgress, requestId);
//   …; void responses.save(id, final, requestId); responses.running.remove(id);
//   GET /v1/responses/{id}: getResponse(responses.store, owner, id, req.query)
export { ownerOf, isResponseId, type ResponseStore, type StoredResponse, type StoreLimits, type EvictionSink } from './store';
export { MemoryResponseStore } from './memory-store';
export { RedisResponseStore } from './redis-store';
export { RunningResponses, type RunningHandle, type CancelRelay } from './running';
export { ResponseState, EVICTED_TOTAL, type ResponseStateDeps } from './state';
export { continueFrom, findResponse, relayedTo } from './resolve';
export { getResponse, deleteResponse, listInputItems, cancelResponse, type DeletedResponse, type CancelOptions } from './endpoints';
export { serveResponses } from './primary-responses';
