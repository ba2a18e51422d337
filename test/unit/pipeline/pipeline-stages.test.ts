// The chain's order by stage: transform plugins first, then validate, then
// the core's own step (admission), then admit and observe; the config's order
// breaks ties within a stage only.
import pino from 'pino';
import { z } from 'zod';
import { createPipeline } from '../../../src/pipeline/pipeline';
import type { PluginDefinition, Stage } from '../../../src/contract/plugin';
import { validateConfig } from '../../../src/config/load';
import { Admission } from '../../../src/admission';
import { LeasePools } from '../../../src/admission/stores';
import { PluginRegistry } from '../../../src/pipeline/registry';
import { compilePrices } from '../../../src/pricing/prices';

const def = (name: string, stage?: Stage): PluginDefinition => ({ name, stage, schema: z.strictObject({}), create: () => ({ onRequest() { /* ordered */ } }) });

async function order(defs: PluginDefinition[]): Promise<string[]> {
  const config = validateConfig({}, '(inline)', {});
  const logger = pino({ level: 'silent' });
  const admission = new Admission(config, { leases: new LeasePools(undefined) } as never, logger);
  const problems: string[] = [];
  const sorted = new PluginRegistry(defs).resolveChain(defs.map((d) => ({ name: d.name })), '/', problems);
  expect(problems).toEqual([]);
  const pipeline = await createPipeline(sorted, { config, logger, services: {}, admission, prices: compilePrices([]), keptOf: () => undefined }, { name: 'core', run: () => undefined });
  return pipeline.onRequest.map((h) => h.name);
}

describe('the chain\'s stages', () => {
  it('runs transform, then validate, then the core step, then admit and observe', async () => {
    expect(await order([def('quota', 'admit'), def('filter', 'validate'), def('audit', 'observe'), def('redact', 'transform')]))
      .toEqual(['redact', 'filter', 'core', 'quota', 'audit']);
  });

  it('keeps the core step after transform plugins when no validate plugin runs', async () => {
    expect(await order([def('redact', 'transform'), def('quota')])).toEqual(['redact', 'core', 'quota']);
    expect(await order([def('redact', 'transform')])).toEqual(['redact', 'core']);
  });
});
