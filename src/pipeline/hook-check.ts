// Checks a plugin's hooks when it loads, as Fastify checks addHook: a closed
// list of names, functions only, and synchronous where the hook runs inside a
// write to the client.
import { PHASES, type PluginHooks } from '../contract/plugin';

/** Hooks that run inside a write to the client (or as it starts): a promise there would be sent as text, or lost. */
const SYNC_ONLY: readonly string[] = ['outputRules', 'onEvent', 'onResponseHead', 'onStreamEnd', 'onResponseBody', 'toolResultRules'];
/** Not a hook: the factory of the plugin's per-request state. */
const STATE = 'state';
const LOOKS_LIKE_A_HOOK = /^on[A-Z]/;

/** Every method name an object answers to: its own keys and its class's methods (not Object's). */
function methodNames(hooks: object): string[] {
  const names = new Set(Object.keys(hooks));
  for (let proto = Object.getPrototypeOf(hooks); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) if (key !== 'constructor') names.add(key);
  }
  return [...names];
}

/**
 * Checks a plugin's hooks when it loads, as Fastify checks addHook: every own
 * key, and every class method named like a hook (onSomething), must be a known
 * phase and a function; onEvent and onResponseHead must be synchronous.
 */
export function checkHooks(hooks: PluginHooks<unknown>, name: string): PluginHooks<unknown> {
  if (hooks === null || typeof hooks !== 'object') throw new Error(`plugin "${name}": create() must return an object of hooks`);
  const own = new Set(Object.keys(hooks));
  for (const key of methodNames(hooks)) {
    const known = (PHASES as readonly string[]).includes(key) || key === STATE;
    if (!known && (own.has(key) || LOOKS_LIKE_A_HOOK.test(key))) {
      throw new Error(`plugin "${name}" has an unknown hook "${key}" (known: ${PHASES.join(', ')})`);
    }
    if (!known) continue;
    const fn = (hooks as Record<string, unknown>)[key];
    if (typeof fn !== 'function') throw new Error(`plugin "${name}": hook "${key}" is not a function`);
    if (SYNC_ONLY.includes(key) && fn.constructor?.name === 'AsyncFunction') {
      throw new Error(`plugin "${name}": hook "${key}" is async, but it must be synchronous: it runs while the response is being written, so a promise would reach the client as text. Do the async work in onRequest or onFinish.`);
    }
  }
  return hooks;
}

