// What a translation dropped, counted in sluice_protocol_dropped_total by the
// names the protocols define; every name a client makes up (a metadata key,
// a field of its own on a block or a tool) counts as "other", so no client
// can grow the metric's series.
import pino from 'pino';
import { Registry } from 'prom-client';
import { droppedReporter, shownName } from '../../../src/api/dropped';
import type { RequestContext } from '../../../src/contract/plugin';
import { parseExposition, series } from '../../support/metrics';

async function counted(names: string[]): Promise<Record<string, number>> {
  const registry = new Registry();
  const headers: Record<string, string> = {};
  const ctx = { id: 'req-1', protocol: 'messages', setHeader: (name: string, value: string) => { headers[name] = value; } } as unknown as RequestContext;
  droppedReporter(registry, pino({ level: 'silent' })).report(ctx, names);
  expect(headers['x-sluice-dropped']).toBe(names.join(', '));
  return series(parseExposition(await registry.metrics()), 'sluice_protocol_dropped_total');
}

describe('a dropped name as the header shows it', () => {
  it.each([
    ['metadata.session_a1', 'metadata.session_a1'],
    ['metadata.☃', 'metadata.%E2%98%83'],
    ['tools.ws\r\nX: 1', 'tools.ws%0D%0AX:%201'],
    ['<script>', '%3Cscript%3E'],
    ['a, b', 'a%2C%20b'],
    ['\ud800', '%EF%BF%BD'],
    ['x'.repeat(5000), 'x'.repeat(64)],
  ])('%j is %s', (name, shown) => {
    expect(shownName(name)).toBe(shown);
  });
});

describe('the dropped-names counter', () => {
  it('counts the names the Messages translation defines by name', async () => {
    const names = ['cache_control', 'context_management', 'thinking.display', 'content.thinking', 'content.redacted_thinking', 'tools.defer_loading', 'output_config.format', 'assistant_prefill'];
    expect(await counted(names)).toEqual(Object.fromEntries(names.map((name) => [`name=${name},protocol=messages`, 1])));
  });

  it('counts the names a client made up as other', async () => {
    const names = ['metadata.session_a1', 'metadata.session_b2', 'output_config.anything_new', 'tools.my_own_field', 'content.my_block', 'thinking.my_field', 'my_top_level_field'];
    expect(await counted(names)).toEqual({ 'name=other,protocol=messages': names.length });
  });
});
