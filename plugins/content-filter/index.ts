// content-filter: refuses a request any of whose text (the image prompt, chat
// messages in every form, tool calls and results, tool definitions, stop
// strings, string parameters) contains a configured term (case-insensitive,
// whole words or phrases, on text folded as a reader sees it: src/text/fold.ts,
// accents off unless `accents: exact`; JSON escapes decoded) or matches a
// configured regular expression. The answer is the interface's
// content_filter error and never says which rule matched, so callers cannot
// probe the rules. With `output`, answers are checked too, as they stream
// (output.ts): a match cuts the answer (block) or is replaced (mask). An MCP
// tool call's arguments are read as a request's texts (refused on a match),
// its result under the same output rules (cut or masked).
//
//   - { name: content-filter, terms: ["forbidden phrase"], patterns: ["\\bcredit card number\\b"], contact: "policy@example.com",
//       output: { terms: ["project bluebird"], action: block } }
import { z } from 'zod';
import { GatewayError, type PluginDefinition } from '../../src';
import { compileMatcher } from './matcher';
import { outputRules } from './output';

const regex = z.string().min(1).superRefine((p, ctx) => {
  try {
    new RegExp(p, 'iu');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

/** The longest a pattern's match may be when a plain string names it: what streaming answers hold back for it. */
const DEFAULT_PATTERN_CHARS = 64;

const outputSchema = z.strictObject({
  terms: z.array(z.string().trim().min(1)).default([]),
  // A pattern cannot say how long its matches are: the stream holds back that many characters for it.
  patterns: z.array(z.union([regex, z.strictObject({ pattern: regex, maxChars: z.number().int().min(1).max(4096) })]))
    .default([]).transform((list) => list.map((p) => (typeof p === 'string' ? { pattern: p, maxChars: DEFAULT_PATTERN_CHARS } : p))),
  action: z.enum(['block', 'mask']).default('block'),
  mask: z.string().default('[redacted]'),
  // Reasoning text (a model's thinking, its summaries) is read too unless this is false.
  reasoning: z.boolean().default(true),
});

const settingsSchema = z.strictObject({
  terms: z.array(z.string().trim().min(1)).default([]),
  patterns: z.array(regex).default([]),
  contact: z.string().min(1).optional(),
  // fold: "crédit" is "credit" (an accent cannot hide a term); exact: a letter with its own accent is another letter.
  accents: z.enum(['fold', 'exact']).default('fold'),
  policyUrl: z.string().min(1).optional(),
  output: outputSchema.optional(),
});

export type ContentFilterSettings = z.infer<typeof settingsSchema>;

export function refusalMessage(s: Pick<ContentFilterSettings, 'contact' | 'policyUrl'>): string {
  const policy = s.policyUrl ? `the content policy (${s.policyUrl})` : 'the content policy';
  const contact = s.contact ? ` If you believe this is a mistake, contact ${s.contact}.` : ' If you believe this is a mistake, contact the operator of this service.';
  return `Your request was rejected because it may violate ${policy}.${contact}`;
}

/** The refusal of a tool call's arguments: what to change, and nothing of which rule matched. */
export function toolRefusalMessage(s: Pick<ContentFilterSettings, 'contact' | 'policyUrl'>): string {
  const policy = s.policyUrl ? `the content policy (${s.policyUrl})` : 'the content policy';
  const contact = s.contact ? ` If you believe this is a mistake, contact ${s.contact}.` : '';
  return `The tool call's arguments were refused because they may violate ${policy}. Change the arguments and call the tool again.${contact}`;
}

export const plugin: PluginDefinition<ContentFilterSettings> = {
  name: 'content-filter',
  stage: 'validate',
  schema: settingsSchema,
  // The interface's own refusal for content policy.
  reasons: { content_filter: 400 },
  create(settings) {
    const matches = compileMatcher(settings.terms, settings.patterns, settings.accents);
    const message = refusalMessage(settings);
    const refuse = () => new GatewayError('content_filter', message, { param: 'prompt' });
    const toolMessage = toolRefusalMessage(settings);
    const rules = settings.output === undefined ? undefined : outputRules({ ...settings.output, accents: settings.accents });
    const output = rules === undefined ? undefined : { ...rules, readsReasoning: settings.output!.reasoning };
    return {
      onRequest(ctx) {
        for (const text of ctx.texts) if (matches(text)) throw refuse();
      },
      ...(output !== undefined && { outputRules: () => output }),
      // An MCP tool call: its arguments as a request's texts, its result under the output rules.
      onToolCall(call) {
        for (const text of call.texts) if (matches(text)) throw new GatewayError('content_filter', toolMessage, { param: 'arguments' });
      },
      ...(rules !== undefined && { toolResultRules: () => rules }),
    };
  },
};
