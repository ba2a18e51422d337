// The admin API's keys: create (the key shown once, only its digest kept),
// list, read, change, revoke and rotate. Keys made here live in the runtime
// keys' store (src/keys/); the config file's keys are listed and read too,
// but change only in the file: an id of the config is never taken by a
// runtime key (409), so a runtime key never shadows one. A revoked key's id
// may be used again: the new key gets an identity of its own (its `uid`),
// and what the old one stored stays the old one's.
import { hashKey, newKey } from '../auth/keys';
import { GatewayError } from '../contract/errors';
import { configKeyView, keyView, newKeyUid, type StoredKey } from '../keys/stored-key';
import type { KeyStore } from '../keys/store';
import { createInput, patchInput, rotateInput, type KeyRules } from './key-input';
import { route, type AdminCall, type AdminRoute } from './router';

export interface KeyRoutesDeps {
  /** The config in force and the plugins it runs: what a key is checked against. */
  rules(): KeyRules;
  /** Where runtime keys are written; undefined while the config has no `admin` section. */
  store(): KeyStore | undefined;
}

const now = (): string => new Date().toISOString();

function storeOf(deps: KeyRoutesDeps): KeyStore {
  const store = deps.store();
  if (store === undefined) throw new GatewayError('store_unavailable', 'Runtime keys are off: the config in force has no admin section.');
  return store;
}

const unknownKey = (id: string): GatewayError =>
  new GatewayError('not_found', `No runtime key "${id.slice(0, 64)}". GET /admin/keys lists the keys.`, { param: 'id' });

/** The config's own key of this id, if any. */
const configKey = (deps: KeyRoutesDeps, id: string) => deps.rules().loaded.config.keys.find((k) => k.id === id);

/** Refuses a change to a key of the config file (409): it changes in the file. */
function runtimeOnly(deps: KeyRoutesDeps, call: AdminCall): string {
  const { id } = call.params;
  call.keyId = id;
  if (configKey(deps, id) !== undefined) throw new GatewayError('conflict', `Key "${id}" is in the config file; change it there and reload.`, { param: 'id' });
  return id;
}

async function create(deps: KeyRoutesDeps, call: AdminCall) {
  const rules = deps.rules();
  const input = createInput(call.body, rules);
  call.keyId = input.id;
  if (configKey(deps, input.id) !== undefined) throw new GatewayError('conflict', `Key id "${input.id}" is in the config file; pick another id.`, { param: 'id' });
  const key = newKey();
  const at = now();
  const record: StoredKey = { id: input.id, uid: newKeyUid(), sha256: hashKey(key), entry: input.entry, ...(input.expiresAt !== undefined && { expiresAt: input.expiresAt }), createdAt: at, updatedAt: at };
  if (!await storeOf(deps).create(record)) throw new GatewayError('conflict', `Key id "${input.id}" is taken; pick another id, or change that key with PATCH.`, { param: 'id' });
  return { status: 201, body: { key, ...keyView(record) } };
}

async function list(deps: KeyRoutesDeps) {
  const runtime = await storeOf(deps).list();
  const configured = deps.rules().loaded.config.keys.map(configKeyView);
  return { body: { object: 'list', data: [...configured, ...runtime.map((r) => keyView(r))] } };
}

async function show(deps: KeyRoutesDeps, call: AdminCall) {
  const { id } = call.params;
  call.keyId = id;
  const configured = configKey(deps, id);
  if (configured !== undefined) return { body: configKeyView(configured) };
  const record = await storeOf(deps).get(id);
  if (record === undefined) throw unknownKey(id);
  return { body: keyView(record) };
}

async function update(deps: KeyRoutesDeps, call: AdminCall) {
  const id = runtimeOnly(deps, call);
  const rules = deps.rules();
  const changed = await storeOf(deps).update(id, (current) => {
    const { expiresAt: _old, ...rest } = current;
    return { ...rest, ...patchInput(call.body, current, rules), updatedAt: now() };
  });
  if (changed === undefined) throw unknownKey(id);
  return { body: keyView(changed) };
}

async function revoke(deps: KeyRoutesDeps, call: AdminCall) {
  const id = runtimeOnly(deps, call);
  const removed = await storeOf(deps).remove(id);
  if (removed === undefined) throw unknownKey(id);
  return { body: { id, revoked: true } };
}

async function rotate(deps: KeyRoutesDeps, call: AdminCall) {
  const id = runtimeOnly(deps, call);
  const { graceSeconds } = rotateInput(call.body);
  const key = newKey();
  const rotated = await storeOf(deps).update(id, (current) => {
    const at = Date.now();
    const { previous: _gone, ...rest } = current;
    // One old key at a time: a second rotation ends the first one's grace period.
    const previous = graceSeconds > 0 ? { sha256: current.sha256, until: new Date(at + graceSeconds * 1000).toISOString() } : undefined;
    return { ...rest, sha256: hashKey(key), ...(previous && { previous }), updatedAt: new Date(at).toISOString() };
  });
  if (rotated === undefined) throw unknownKey(id);
  return { body: { key, ...keyView(rotated) } };
}

export function keyRoutes(deps: KeyRoutesDeps): AdminRoute[] {
  return [
    route('POST', '/admin/keys', 'keys.create', (call) => create(deps, call)),
    route('GET', '/admin/keys', 'keys.list', () => list(deps)),
    route('GET', '/admin/keys/:id', 'keys.show', (call) => show(deps, call)),
    route('PATCH', '/admin/keys/:id', 'keys.update', (call) => update(deps, call)),
    route('DELETE', '/admin/keys/:id', 'keys.revoke', (call) => revoke(deps, call)),
    route('POST', '/admin/keys/:id/rotate', 'keys.rotate', (call) => rotate(deps, call)),
  ];
}
