// The usage export's two formats, one line per record: JSON Lines (the
// record as stored) or CSV (a header line, then the fields in COLUMNS'
// order, RFC 4180 quoting where a field needs it; cost as a plain decimal).
import { costText } from '../pricing/prices';
import type { UsageRecord } from './record';

export const COLUMNS = ['time', 'request_id', 'key', 'org', 'model', 'protocol', 'endpoint', 'status', 'reason',
  'prompt_tokens', 'cached_tokens', 'completion_tokens', 'reasoning_tokens', 'estimated', 'cost'] as const;

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A cost as CSV writes it: a plain decimal, or an empty field when no price named the model. */
export const dollarText = (dollars: number | null): string => (dollars === null ? '' : costText(dollars));

export const csvHeader = (): string => `${COLUMNS.join(',')}\n`;

export const csvLine = (r: UsageRecord): string => `${COLUMNS.map((c) => (c === 'cost' ? dollarText(r.cost) : csvField(r[c]))).join(',')}\n`;

export const jsonLine = (r: UsageRecord): string => `${JSON.stringify(r)}\n`;

/** The export's lines, header first for CSV. */
export async function* exportLines(records: AsyncIterable<UsageRecord>, format: 'jsonl' | 'csv'): AsyncIterable<string> {
  if (format === 'csv') yield csvHeader();
  for await (const r of records) yield format === 'csv' ? csvLine(r) : jsonLine(r);
}
