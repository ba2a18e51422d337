// The usage export's two formats, one line per record: JSON Lines (the
// record as stored) or CSV (a header line, then the fields in COLUMNS'
// order, RFC 4180 quoting where a field needs it; cost as a plain decimal).
// A client names its model and its request id, so a text cell that a
// spreadsheet would run as a formula (one beginning with = + - @, a tab or a
// carriage return) is written as text: a single quote before it, the field
// quoted (OWASP's rule for CSV injection). Numbers and booleans the gateway
// writes itself stay as they are.
import { costText } from '../pricing/prices';
import type { UsageRecord } from './record';

export const COLUMNS = ['time', 'request_id', 'key', 'team', 'org', 'user', 'model', 'protocol', 'endpoint', 'status', 'reason',
  'prompt_tokens', 'cached_tokens', 'completion_tokens', 'reasoning_tokens', 'estimated', 'cost',
  // An MCP tool call's own fields, empty on a model request's line.
  'server', 'tool', 'outcome', 'duration_ms', 'bytes_in', 'bytes_out',
  // An audio request's unit, empty on any other line.
  'audio_seconds', 'characters'] as const;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

const quoted = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/** A field as CSV writes it: a string that could start a formula as quoted text, a number or boolean as it is. */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  if (FORMULA_START.test(value)) return quoted(`'${value}`);
  return NEEDS_QUOTES.test(value) ? quoted(value) : value;
}

/** A cost as CSV writes it: a plain decimal, or an empty field when no price named the model. */
export const dollarText = (dollars: number | null): string => (dollars === null ? '' : costText(dollars));

export const csvHeader = (): string => `${COLUMNS.join(',')}\n`;

export const csvLine = (r: UsageRecord): string => `${COLUMNS.map((c) => (c === 'cost' ? dollarText(r.cost) : csvField(r[c] ?? null))).join(',')}\n`;

export const jsonLine = (r: UsageRecord): string => `${JSON.stringify(r)}\n`;

/** The export's lines, header first for CSV. */
export async function* exportLines(records: AsyncIterable<UsageRecord>, format: 'jsonl' | 'csv'): AsyncIterable<string> {
  if (format === 'csv') yield csvHeader();
  for await (const r of records) yield format === 'csv' ? csvLine(r) : jsonLine(r);
}
