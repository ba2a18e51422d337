// The built-in plugins, handed to the registry by the composition root.
import type { PluginDefinition } from '../src';
import { plugin as contentFilter } from './content-filter';
import { plugin as limits } from './limits';
import { plugin as rateLimit } from './rate-limit';
import { plugin as metrics } from './metrics';
import { plugin as pii } from './pii';

export const builtinPlugins: PluginDefinition<any>[] = [pii, contentFilter, limits, rateLimit, metrics];
