// A tool's result under the plugins' output rules (toolResultRules), read as
// the output rules read a model's answer (OutputRules.scan on the text as a
// client reads it: src/output-rules/view.ts decodes JSON escapes and
// shortens filler). The result is whole here, so each plugin's rules read
// all of it at once, in chain order (what one masks, the next reads):
//   - its content blocks' texts (a text block's text, an embedded resource's
//     text) as one text, in order, read twice: joined as they come (a term
//     split across blocks, "project blue" + "bird") and with a line break
//     between blocks (a client may show each block on its own: "project" +
//     "bluebird"); each match is placed back in the blocks it spans;
//   - structuredContent's strings (keys too), each on its own.
// A mask replaces the match (in the block where it begins; the rest of it is
// taken out of the blocks after). A block cuts the result there: the text
// before the match is kept, every later block and the structured content
// dropped, a last text block says the rest was withheld, and the result is
// marked isError (so a client that checks structured content against the
// tool's output schema does not take the cut result for a broken one).
//
//   const checked = applyResultRules(policy, result);   // { result, filtered: 'mask' }
import type { ToolResult } from '../contract/plugin';
import type { OutputPolicy } from '../pipeline/output-policy';
import { TextView } from '../output-rules/view';
import { rewriteStrings } from '../request/rewrite-strings';

/** The last block of a cut result. */
export const WITHHELD = 'The rest of this tool result was withheld by the gateway\'s content policy.';

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Where a block's text is: a text block's `text`, an embedded resource's `resource.text`. */
function textOf(block: unknown): string | undefined {
  if (!isObject(block)) return undefined;
  if (block.type === 'text' && typeof block.text === 'string') return block.text;
  if (block.type === 'resource' && isObject(block.resource) && typeof block.resource.text === 'string') return block.resource.text;
  return undefined;
}

const withText = (block: Record<string, any>, text: string): Record<string, unknown> =>
  (block.type === 'text' ? { ...block, text } : { ...block, resource: { ...block.resource, text } });

/** Texts read as one, after the rules: each text as it now is; `cut` the text a block ended in, when one did. */
interface Checked { texts: string[]; cut?: number; acted: boolean }

/** `texts`, read as one text in order, through every plugin's rules. */
export function checkTexts(policy: OutputPolicy, texts: readonly string[]): Checked {
  let current = [...texts];
  let acted = false;
  for (const { plugin, rules } of policy.rules) {
    const joined = current.join('');
    if (joined === '') break;
    const view = new TextView();
    view.append(joined, 0);
    view.finish(joined.length);
    const { matches } = rules.scan(view.text, 0);
    if (matches.length === 0) continue;
    // Where each text begins in the joined one, and what each becomes.
    const starts: number[] = [];
    current.reduce((at, t) => (starts.push(at), at + t.length), 0);
    const slotOf = (at: number): number => { let i = starts.length - 1; while (i > 0 && starts[i] > at) i--; return i; };
    const out = current.map(() => '');
    const emit = (from: number, to: number): void => {
      for (let i = slotOf(from); i < current.length && starts[i] < to; i++) out[i] += joined.slice(Math.max(from, starts[i]), Math.min(to, starts[i] + current[i].length));
    };
    let cursor = 0;
    for (const m of matches) {
      const start = view.rawAt(m.start);
      const end = view.rawAt(m.end);
      if (start < cursor || end <= start) continue;
      policy.counter?.inc({ plugin, kind: m.kind, action: m.action });
      acted = true;
      emit(cursor, start);
      if (m.action === 'block') {
        // Empty texts before the one a match begins in still end there: the cut is in the last text emitted.
        const slot = slotOf(start);
        return { texts: out.slice(0, slot + 1), cut: slot, acted };
      }
      out[slotOf(start)] += m.replacement ?? '';
      cursor = end;
    }
    emit(cursor, joined.length);
    current = out;
  }
  return { texts: current, acted };
}

/** The blocks' texts read joined as they come, then (what that left) with a line break between each two. */
function readBlocks(policy: OutputPolicy, texts: readonly string[]): Checked {
  const joined = checkTexts(policy, texts);
  if (joined.cut !== undefined || texts.length < 2) return joined;
  const spaced = checkTexts(policy, joined.texts.flatMap((t, i) => (i === 0 ? [t] : [SEPARATOR, t])));
  // A separator is the gateway's, not the tool's: gone again, unless a mask that began there left its replacement.
  const out = spaced.texts.flatMap((t, i) => (i % 2 === 1 ? [] : [(i > 0 && spaced.texts[i - 1] !== SEPARATOR ? spaced.texts[i - 1] : '') + t]));
  if (spaced.cut !== undefined && spaced.cut % 2 === 1) out.length = (spaced.cut + 1) / 2;
  return { texts: out, cut: spaced.cut === undefined ? undefined : Math.floor(spaced.cut / 2), acted: joined.acted || spaced.acted };
}

const SEPARATOR = '\n';

export interface CheckedResult {
  result: ToolResult;
  /** What the rules did, if anything. */
  filtered?: 'mask' | 'block';
}

export function applyResultRules(policy: OutputPolicy, result: ToolResult): CheckedResult {
  const at: number[] = []; // the indices of the blocks that hold text
  const texts: string[] = [];
  result.content.forEach((block, i) => {
    const text = textOf(block);
    if (text !== undefined) { at.push(i); texts.push(text); }
  });
  const checked = readBlocks(policy, texts);
  const content = result.content.map((block, i) => {
    const slot = at.indexOf(i);
    return slot === -1 || checked.texts[slot] === undefined ? block : withText(block, checked.texts[slot]);
  });
  if (checked.cut !== undefined) {
    // The block the match began in stays for the text before it, if any.
    const kept = content.slice(0, at[checked.cut] + (checked.texts[checked.cut] === '' ? 0 : 1));
    return { result: cut(result, kept), filtered: 'block' };
  }
  let acted = checked.acted;
  let blocked = false;
  const structured = result.structuredContent === undefined ? undefined : rewriteStrings(result.structuredContent, (s) => {
    if (blocked) return s;
    const one = checkTexts(policy, [s]);
    acted ||= one.acted;
    blocked = one.cut !== undefined;
    return one.texts[0] ?? '';
  }, true, true);
  if (blocked) return { result: cut(result, content), filtered: 'block' };
  if (!acted) return { result };
  return { result: { ...result, content, ...(structured !== undefined && { structuredContent: structured }) }, filtered: 'mask' };
}

/** The result cut where a block matched: what came before, and a last block saying the rest was withheld. */
function cut(result: ToolResult, kept: Array<Record<string, unknown>>): ToolResult {
  const { structuredContent: _dropped, ...rest } = result;
  return { ...rest, content: [...kept, { type: 'text', text: WITHHELD }], isError: true };
}
