// The texts of a Responses answer, as parts the output rules read: where
// each lives in the events and in the output items. A part's id is
// "<output_index>:<kind><index>": t an output_text content part, r a refusal
// part, x a reasoning_text part, s a reasoning summary part (by
// summary_index), a a function call's arguments, i a custom tool call's
// input. Visible text (t) shares one key across parts and items, refusals
// (r) another, reasoning (x, s) a third; a call's arguments are its own.
import type { Loose, PartKey } from './native-events';

interface Kind {
  delta: string;
  done: string;
  /** The field of the .done event (and of the part or item) that holds the whole text. */
  field: string;
  /** The index field naming the part in its events; none for a call's input. */
  index?: 'content_index' | 'summary_index';
  /** The part object, in content_part / reasoning_summary_part events and in the item. */
  part?: string;
  key?: string;
}

const KINDS: Readonly<Record<string, Kind>> = {
  t: { delta: 'response.output_text.delta', done: 'response.output_text.done', field: 'text', index: 'content_index', part: 'output_text', key: 'text' },
  r: { delta: 'response.refusal.delta', done: 'response.refusal.done', field: 'refusal', index: 'content_index', part: 'refusal', key: 'refusal' },
  x: { delta: 'response.reasoning_text.delta', done: 'response.reasoning_text.done', field: 'text', index: 'content_index', part: 'reasoning_text', key: 'reasoning' },
  s: { delta: 'response.reasoning_summary_text.delta', done: 'response.reasoning_summary_text.done', field: 'text', index: 'summary_index', part: 'summary_text', key: 'reasoning' },
  a: { delta: 'response.function_call_arguments.delta', done: 'response.function_call_arguments.done', field: 'arguments' },
  i: { delta: 'response.custom_tool_call_input.delta', done: 'response.custom_tool_call_input.done', field: 'input' },
};

/** Event type → [kind, is it the .done]. */
export const TEXT_EVENTS: ReadonlyMap<string, [string, boolean]> = new Map(Object.entries(KINDS).flatMap(([k, kind]): Array<[string, [string, boolean]]> => [[kind.delta, [k, false]], [kind.done, [k, true]]]));
const KIND_OF_PART: Readonly<Record<string, string>> = { output_text: 't', refusal: 'r', reasoning_text: 'x', summary_text: 's' };

export const partKey = (part: string): PartKey => {
  const kind = KINDS[part[part.indexOf(':') + 1]];
  if (kind.key === undefined) return { key: part, shared: false, kind: kind.field === 'arguments' ? 'json' : 'text' };
  return { key: kind.key, shared: true, kind: kind.key === 'reasoning' ? 'reasoning' : 'text' };
};

/** The field of a kind's .done event that holds the whole text. */
export const fieldOf = (kind: string): string => KINDS[kind].field;

/** The part a text event (a delta or .done) is about. */
export function partOfEvent(event: Loose, kind: string): string {
  const index = KINDS[kind].index;
  return `${event.output_index}:${kind}${index === undefined ? '' : event[index] ?? 0}`;
}

/** The part a content_part / reasoning_summary_part event's `part` is, and the field of its text; undefined for other parts. */
export function partOfPart(event: Loose): { part: string; field: string } | undefined {
  const kind = KIND_OF_PART[event.part?.type];
  if (kind === undefined) return undefined;
  const index = event.type.startsWith('response.reasoning_summary_part') ? event.summary_index : event.content_index;
  return { part: `${event.output_index}:${kind}${index ?? 0}`, field: KINDS[kind].field };
}

const parse = (part: string): { output: number; kind: Kind; k: string; index: number } => {
  const colon = part.indexOf(':');
  const k = part[colon + 1];
  return { output: Number(part.slice(0, colon)), kind: KINDS[k], k, index: Number(part.slice(colon + 2) || 0) };
};

/** A delta event carrying `text` for a part. */
export function deltaOf(part: string, text: string, itemId: unknown): Loose {
  const { output, kind, k, index } = parse(part);
  return { type: kind.delta, item_id: itemId, output_index: output, ...(kind.index && { [kind.index]: index }), delta: text, ...(k === 't' && { logprobs: [] }) };
}

/** The part object holding `text` (in an item, or a part event). */
const partObject = (k: string, text: string): Loose => (k === 't' ? { type: 'output_text', text, annotations: [] } : { type: KINDS[k].part, [KINDS[k].field]: text });

/** The events that end a part with this text: its .done, then its part's .done. */
export function doneEventsOf(part: string, text: string, itemId: unknown): Loose[] {
  const { output, kind, k, index } = parse(part);
  const at = { item_id: itemId, output_index: output, ...(kind.index && { [kind.index]: index }) };
  const done: Loose = { type: kind.done, ...at, [kind.field]: text, ...(k === 't' && { logprobs: [] }) };
  if (kind.part === undefined) return [done];
  const partDone = k === 's' ? 'response.reasoning_summary_part.done' : 'response.content_part.done';
  return [done, { type: partDone, ...at, part: partObject(k, text) }];
}

/** An output item with each of its texts passed through `fn(part, text)`; the same object when none changed. */
export function mapItemTexts(output: number, item: Loose, fn: (part: string, text: string) => string): Loose {
  if (item === null || typeof item !== 'object') return item;
  const field = (name: string, k: string): Loose => {
    const text = item[name];
    if (typeof text !== 'string') return item;
    const next = fn(`${output}:${k}`, text);
    return next === text ? item : { ...item, [name]: next };
  };
  if (item.type === 'function_call') return field('arguments', 'a');
  if (item.type === 'custom_tool_call') return field('input', 'i');
  if (item.type === 'message') return mapParts(output, item, 'content', fn);
  if (item.type === 'reasoning') return mapParts(output, mapParts(output, item, 'summary', fn), 'content', fn);
  return item;
}

function mapParts(output: number, item: Loose, name: string, fn: (part: string, text: string) => string): Loose {
  const parts = item[name];
  if (!Array.isArray(parts)) return item;
  let changed = false;
  const next = parts.map((p: Loose, i: number) => {
    const k = KIND_OF_PART[p?.type];
    const field = k === undefined ? undefined : KINDS[k].field;
    if (field === undefined || typeof p[field] !== 'string') return p;
    const text = fn(`${output}:${k}${i}`, p[field]);
    if (text === p[field]) return p;
    changed = true;
    return { ...p, [field]: text };
  });
  return changed ? { ...item, [name]: next } : item;
}

/** An item cut short: its texts are the parts it streamed, as released (`of`). */
export function cutItem(item: Loose, parts: readonly string[], of: (part: string) => string): Loose {
  const texts = (ks: string): Loose[] => parts.filter((p) => ks.includes(parse(p).k)).map((p) => partObject(parse(p).k, of(p)));
  const at = parts.find((p) => 'ai'.includes(parse(p).k));
  if (item.type === 'message') return { ...item, content: texts('tr') };
  if (item.type === 'reasoning') return { ...item, summary: texts('s'), ...(parts.some((p) => parse(p).k === 'x') && { content: texts('x') }) };
  if (at !== undefined) return { ...item, [parse(at).kind.field]: of(at) };
  return item;
}
