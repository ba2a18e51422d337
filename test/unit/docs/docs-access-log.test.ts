// The access log's fields (src/api/access-log.ts) each have a row in the
// table of docs/operations.md's Logs section, and the table names no field
// the line no longer writes: a line with every field present is written and
// its keys compared with the table's.
import { accessLine } from '../../../src/api/access-log';
import type { Context } from '../../../src/pipeline/context';
import { readRepoFile, sectionOf, tablesIn } from '../../support/markdown';

/** The logger's own keys, before and after the fields: not the access log's to document. */
const LOGGER_KEYS = ['level', 'time', 'service', 'msg'];

/** A request that has every field the line can write. */
const everything = {
  id: 'req-1', trace: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }, principal: { id: 'team-a', org: 'acme' },
  endpoint: 'chat', protocol: 'messages', version: 'v1', model: 'm-1', route: { upstream: 'u' }, stream: true,
  timings: { upstreamFirstByte: 12.3, firstEvent: 15.6 },
  error: { details: { kind: 'status', upstream: 'u', phase: 'head', code: 'HTTP 500' } },
  forwarding: { attempts: 2, skippedEvents: 1, filtered: 'mask', endpoint: 'http://10.0.0.1:8000/v1' },
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, estimated: false }, cost: 0.000123,
} as unknown as Context;

/** Every key of the line, in order. */
function writtenFields(): string[] {
  const line = accessLine(everything, { status: 502, reason: 'upstream_error', aborted: false, durationMs: 20.5 }, ',"time":1', ',"service":"sluice"');
  return Object.keys(JSON.parse(line) as object).filter((k) => !LOGGER_KEYS.includes(k));
}

/** The fields named in the first column of the "Field" table under Logs: each code span of the cell. */
function documentedFields(md: string): string[] {
  const table = tablesIn(sectionOf(md, 'Logs')).find((t) => t.header[0] === 'Field');
  if (table === undefined) throw new Error('no "Field" table under Logs');
  return table.rows.flatMap((r) => [...(r[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]));
}

describe('docs/operations.md, the access log', () => {
  const written = writtenFields();
  const documented = documentedFields(readRepoFile('docs/operations.md')!);

  it('finds the fields of a full line', () => {
    expect(written).toEqual(expect.arrayContaining(['requestId', 'traceId', 'protocol', 'upstreamError', 'tokens', 'cost']));
  });

  it('has a row for every field the access log writes, and none for a field it does not, in the order written', () => {
    expect(documented).toEqual(written);
  });
});
