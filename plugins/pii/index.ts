// pii: personal data in requests and answers: e-mail addresses, phone
// numbers, payment card numbers (Luhn-checked), IBANs (checksum-checked) and
// the operator's own patterns (detectors.ts). On input (a transform-stage
// plugin, so every later stage reads what it leaves): `redact` each value to
// a placeholder stable within the request ([EMAIL_1]), `refuse` the request,
// or `allow` it (counted only). On output: `mask` each value in the answer
// as it streams ([EMAIL]), `block` (cut the answer there), or `allow`.
// Counted by kind; a value is never logged. An MCP tool call's arguments are
// read as a request's texts, its result as an answer.
//
//   - { name: pii, input: redact, output: mask, kinds: [email, phone, card, iban],
//       patterns: [{ name: employee_id, pattern: "\\bEMP-\\d{6}\\b", maxChars: 10 }] }
import { z } from 'zod';
import { Counter, type Registry } from 'prom-client';
import { GatewayError, rewriteTexts, type PluginDefinition, type RequestContext } from '../../src';
import { BUILT_IN, patternDetector, type Detection, type Detector } from './detectors';
import { piiOutputRules } from './output';
import { detectIn, Placeholders, redact } from './redact';

const KINDS = ['email', 'phone', 'card', 'iban'] as const;

const NOUNS: Readonly<Record<string, string>> = { email: 'an e-mail address', phone: 'a phone number', card: 'a payment card number', iban: 'an IBAN' };

const regex = z.string().min(1).superRefine((p, ctx) => {
  try {
    new RegExp(p, 'u');
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

const settingsSchema = z.strictObject({
  kinds: z.array(z.enum(KINDS)).default([...KINDS]),
  patterns: z.array(z.strictObject({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'a lower-case name (letters, digits, _), used in placeholders and as a metric label')
      .refine((n) => !(KINDS as readonly string[]).includes(n), 'a built-in kind\'s name: choose another'),
    pattern: regex,
    // The longest a match can be: what a streaming answer holds back for it.
    maxChars: z.number().int().min(1).max(4096),
  })).default([]),
  input: z.enum(['redact', 'refuse', 'allow']).default('redact'),
  output: z.enum(['mask', 'block', 'allow']).default('mask'),
  // Reasoning text in answers (a model's thinking, its summaries) is read too unless this is false.
  outputReasoning: z.boolean().default(true),
});

export type PiiSettings = z.infer<typeof settingsSchema>;

type Detections = Counter<'kind' | 'action'>;

function detectionsCounter(registry: Registry): Detections {
  return (registry.getSingleMetric('sluice_pii_detected_total') as Detections | undefined) ?? new Counter({
    name: 'sluice_pii_detected_total', registers: [registry], labelNames: ['kind', 'action'],
    help: 'Personal data found in requests, by kind (email, phone, card, iban, or an operator pattern\'s name) and what was done (redact, refuse, allow). Answers: sluice_output_filtered_total{plugin="pii"}.',
  });
}

export const plugin: PluginDefinition<PiiSettings, Placeholders> = {
  name: 'pii',
  stage: 'transform',
  schema: settingsSchema,
  reasons: { pii_detected: 400 },
  create(settings, env) {
    const builtIn: Detector[] = settings.kinds.map((k) => BUILT_IN[k]);
    const custom = settings.patterns.map((p) => patternDetector(p.name, p.pattern, p.maxChars));
    const detectors = [...builtIn, ...custom];
    const counter = env.services.metrics && detectionsCounter(env.services.metrics);
    const count = (found: readonly Detection[], action: string): void => { for (const d of found) counter?.inc({ kind: d.kind, action }); };
    const find = (text: string): Detection[] => detectIn(detectors, custom.length > 0, text);
    const output = settings.output === 'allow' ? undefined : { ...piiOutputRules(builtIn, custom, settings.output), readsReasoning: settings.outputReasoning };

    /** The kinds of personal data in `texts` (counted as refused); a refusal names them, never a value. */
    const kindsIn = (texts: readonly string[]): string => {
      const kinds = new Set<string>();
      for (const text of texts) {
        const found = find(text);
        count(found, 'refuse');
        for (const d of found) kinds.add(d.kind);
      }
      return [...kinds].map((k) => NOUNS[k] ?? k).join(', ');
    };
    const refuse = (ctx: RequestContext): void => {
      const named = kindsIn(ctx.texts);
      if (named !== '') throw new GatewayError('pii_detected', `Your request contains personal data (${named}) that this service does not accept. Remove it and send the request again.`);
    };
    const redactWith = (placeholders: Placeholders) => (text: string): string => {
      const found = find(text);
      if (found.length === 0) return text;
      count(found, 'redact');
      return redact(text, found, placeholders);
    };

    return {
      state: () => new Placeholders(),
      onRequest(ctx, placeholders) {
        // A pass-through route forwards the client's bytes as sent: what cannot be redacted is refused.
        if (settings.input === 'refuse' || (settings.input === 'redact' && ctx.endpoint === 'passthrough')) return refuse(ctx);
        if (settings.input === 'allow') {
          for (const text of ctx.texts) count(find(text), 'allow');
          return;
        }
        rewriteTexts(ctx, redactWith(placeholders));
      },
      ...(output !== undefined && { outputRules: () => output }),
      // A tool call's arguments as a request's texts (input), its result as an answer (output).
      onToolCall(call, placeholders) {
        if (settings.input === 'allow') {
          for (const text of call.texts) count(find(text), 'allow');
          return;
        }
        if (settings.input === 'redact') return void call.rewriteArguments(redactWith(placeholders));
        const named = kindsIn(call.texts);
        if (named !== '') throw new GatewayError('pii_detected', `The tool call's arguments contain personal data (${named}) that this service does not accept. Remove it and call the tool again.`);
      },
      ...(output !== undefined && { toolResultRules: () => output }),
    };
  },
};
