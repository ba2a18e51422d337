// The PII plugin: each kind found, and not found in what only looks like it
// (order numbers, dates, version strings, UUIDs, amounts, addresses of
// machines); the false positives and negatives it is known to have, listed;
// redaction with placeholders stable within a request, refusal that names
// kinds and never values, and masking of answers as they stream.
import { Registry } from 'prom-client';
import { plugin } from '../../plugins/pii';
import { BUILT_IN, detect } from '../../plugins/pii/detectors';
import { cardValid, ibanValid, luhnValid } from '../../plugins/pii/checksums';
import { OutputText } from '../../src/output-rules/text';
import type { OutputRules, RequestContext } from '../../src/contract/plugin';
import { chatContext, configProblems, hooksOf, pluginEnv, refusalOf, withState } from './helpers';

const found = (text: string): string[] => detect(Object.values(BUILT_IN), text).map((d) => `${d.kind}:${text.slice(d.start, d.end)}`);

/** Real values of each kind, as they are written in text. */
const DETECTED: Array<[string, string[]]> = [
  ['mail bob@example.com now', ['email:bob@example.com']],
  ['first.last+tag@sub.example.co.uk', ['email:first.last+tag@sub.example.co.uk']],
  ['mail jörg@beispiel.de please', ['email:jörg@beispiel.de']],
  ['+1 (415) 555-2671', ['phone:+1 (415) 555-2671']],
  ['(415) 555-2671', ['phone:(415) 555-2671']],
  ['Call 415-555-2671 or 415.555.2671.', ['phone:415-555-2671', 'phone:415.555.2671']],
  ['London: 020 7946 0958, +44 20 7946 0958', ['phone:020 7946 0958', 'phone:+44 20 7946 0958']],
  ['mobile +4915123456789', ['phone:+4915123456789']],
  ['Paris 01 23 45 67 89', ['phone:01 23 45 67 89']],
  ['Fax: +49 (30) 1234-5678', ['phone:+49 (30) 1234-5678']],
  ['card 4111 1111 1111 1111, exp 12/27', ['card:4111 1111 1111 1111']],
  ['4111-1111-1111-1111', ['card:4111-1111-1111-1111']],
  ['pay with 4242424242424242', ['card:4242424242424242']],
  ['amex 3782 822463 10005', ['card:3782 822463 10005']],
  ['mc 5555 5555 5555 4444', ['card:5555 5555 5555 4444']],
  ['IBAN DE89 3704 0044 0532 0130 00 AND MORE', ['iban:DE89 3704 0044 0532 0130 00']],
  ['DE89370400440532013000', ['iban:DE89370400440532013000']],
  ['GB82 WEST 1234 5698 7654 32', ['iban:GB82 WEST 1234 5698 7654 32']],
  ['ES91 2100 0418 4502 0005 1332', ['iban:ES91 2100 0418 4502 0005 1332']],
];

/** What looks like personal data and is not: none of it is found. */
const LOOKALIKES = [
  'lodash@4.17.21', '@babel/core@7.22.0', 'user@localhost', 'foo@bar.baz.123', 'a@b.c', 'see @mentions here',
  '2024-01-15', '2024-01-15 10:30:00', '2024-01-15T10:30:00Z', '15.01.2024', '01/15/2024', '2024-01-15 2024-02-20', 'the years 1990 2000 2010',
  'v1.2.3', '10.0.19045.2965', 'version 2.10.1234.5678', 'build 20240115.1234', '1.2.3-rc.1',
  '192.168.100.200', '10.0.0.1', 'mac 00:1A:2B:3C:4D:5E', 'port 8080-8090',
  'ORD-2024-000123', 'Order 2024-000123', 'INV-2023-0042', '#123-456-7890', 'SSN-like 123-45-6789', 'ISBN 978-3-16-148410-0', '1Z 999 AA1 0123 4567 84',
  '550e8400-e29b-41d4-a716-446655440000', '12345678-1234-1234-1234-123456789012', 'commit 9fceb02d0ae598e95dc970b74767f19372d61af8',
  '1 234 567 890', '12 345 678 901', '$1,234,567.89', 'Amounts 1.234.567,89', 'coords 48.8566, 2.3522', 'epoch 1700000000', '20240115103000',
  '1234 5678 9012 3456', '4111 1111 1111 1112', '9780316148410123',
  'DE89 3704 0044 0532 0130 01', 'AB12 3456 7890 1234', 'DE12 3456',
];

/** Known false positives: found, though the writer may not have meant personal data. */
const FALSE_POSITIVES: Array<[string, string[]]> = [
  ['git@github.com:org/repo.git', ['email:git@github.com']], // an scp-style remote reads as an address
  ['Ticket 2024 1234 5678', ['phone:2024 1234 5678']], // twelve digits in groups of four read as a phone number
  ['Room 12-34-56-78-90', ['phone:12-34-56-78-90']], // ten digits in pairs, as French numbers are written
  ['Order 4532015112830366', ['card:4532015112830366']], // a Visa prefix and a valid Luhn digit: indistinguishable from a card
];

/** Known false negatives: personal data not found. */
const FALSE_NEGATIVES = [
  'Call 555-1234', // a seven-digit local number: too like other numbers
  'call 4155552671', // ten digits unbroken, without +: too like an id
  'de89 3704 0044 0532 0130 00', // an IBAN in lower case
  'bob at example dot com', // an address spelled out
];

describe('pii detectors', () => {
  it.each(DETECTED)('finds %j', (text, expected) => {
    expect(found(text)).toEqual(expected);
  });

  it.each(LOOKALIKES)('finds nothing in %j', (text) => {
    expect(found(text)).toEqual([]);
  });

  it.each(FALSE_POSITIVES)('known false positive: %j', (text, expected) => {
    expect(found(text)).toEqual(expected);
  });

  it.each(FALSE_NEGATIVES)('known false negative: %j', (text) => {
    expect(found(text)).toEqual([]);
  });

  it('checks card numbers by issuer prefix and Luhn, IBANs by country length and mod 97', () => {
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('79927398710')).toBe(false);
    expect(cardValid('4111111111111111')).toBe(true);
    expect(cardValid('1111111111111117')).toBe(false); // Luhn-valid, no issuer starts so
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('DE8937040044053201300')).toBe(false); // one short for Germany
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
  });
});

describe('pii plugin on requests', () => {
  it('redacts each value to a placeholder, the same one for the same value everywhere in the request', async () => {
    const hooks = await hooksOf(plugin, {});
    const ctx = chatContext(['You help bob@example.com.', 'Mail BOB@example.com and ann@example.org, card 4111 1111 1111 1111.'], { user: 'ann@example.org' });
    await hooks.onRequest!(ctx);
    expect(ctx.chat!.messages.map((m) => m.content)).toEqual(['You help [EMAIL_1].', 'Mail [EMAIL_1] and [EMAIL_2], card [CARD_1].']);
    expect(ctx.chat!.model_params.user).toBe('[EMAIL_2]');
    // What later stages read is the redacted request.
    expect(ctx.texts.join(' ')).not.toMatch(/example|4111/);
  });

  it('reads text as a reader sees it: escapes decoded, accents, blanks and full-width digits folded, each replaced in the text as written', async () => {
    const hooks = await hooksOf(plugin, {});
    const ctx = chatContext([
      '{"to":"bob\\u0040example.com","cc":"BOB@example.com"}',
      'Mail b\u00f3b@exa\u0301mple.com or call +1 415\u2800555\u28002671, fax \uff14\uff11\uff15-555-2672.',
      'EMP-12\u00e9 is not a value; C:\\data\\x bob@example.com',
    ]);
    await hooks.onRequest!(ctx);
    expect(ctx.chat!.messages.map((m) => m.content)).toEqual([
      '{"to":"[EMAIL_1]","cc":"[EMAIL_1]"}',
      // Accents off, "bób@exámple.com" reads as the same address.
      'Mail [EMAIL_1] or call [PHONE_1], fax [PHONE_2].',
      'EMP-12\u00e9 is not a value; C:\\data\\x [EMAIL_1]',
    ]);
    expect(JSON.parse(ctx.chat!.messages[0].content as string)).toEqual({ to: '[EMAIL_1]', cc: '[EMAIL_1]' });
  });

  it('redacts keys of the caller\'s data (metadata) as it redacts values', async () => {
    const hooks = await hooksOf(plugin, {});
    const ctx = chatContext(['hi'], { metadata: { 'bob@example.com': 'owner', plain: 'ann@example.org' } });
    await hooks.onRequest!(ctx);
    expect(ctx.chat!.model_params.metadata).toEqual({ '[EMAIL_1]': 'owner', plain: '[EMAIL_2]' });
  });

  it('refuses with pii_detected, naming the kinds and never a value', async () => {
    const hooks = await hooksOf(plugin, { input: 'refuse' });
    const err = await refusalOf(hooks, chatContext(['Call +1 (415) 555-2671 or mail bob@example.com']));
    expect(err).toMatchObject({ reason: 'pii_detected', status: 400 });
    expect(err!.message).toMatch(/a phone number/);
    expect(err!.message).toMatch(/an e-mail address/);
    expect(err!.message).not.toMatch(/415|bob/);
    expect(await refusalOf(hooks, chatContext(['Order 2024-000123 shipped on 2024-01-15']))).toBeUndefined();
  });

  it('refuses what it cannot redact: a pass-through route forwards the bytes as sent', async () => {
    const hooks = await hooksOf(plugin, {});
    const ctx = { endpoint: 'passthrough', texts: ['embed bob@example.com'] } as unknown as RequestContext;
    expect(await refusalOf(hooks, ctx)).toMatchObject({ reason: 'pii_detected' });
  });

  it('counts by kind and action, on allow too, without changing the request', async () => {
    const metrics = new Registry();
    const hooks = withState(await plugin.create(plugin.schema.parse({ input: 'allow', patterns: [{ name: 'employee_id', pattern: '\\bEMP-\\d{6}\\b', maxChars: 10 }] }), pluginEnv(plugin, undefined, { metrics })));
    const ctx = chatContext(['bob@example.com and ann@example.org, EMP-123456']);
    await hooks.onRequest!(ctx);
    expect(ctx.chat!.messages[0].content).toBe('bob@example.com and ann@example.org, EMP-123456');
    const counted = (await metrics.getSingleMetric('sluice_pii_detected_total')!.get()).values.map((v) => [v.labels.kind, v.labels.action, v.value]);
    expect(counted).toEqual(expect.arrayContaining([['email', 'allow', 2], ['employee_id', 'allow', 1]]));
  });

  it('refuses bad settings at load, with their paths', () => {
    expect(configProblems(plugin, { kinds: ['ssn'] })[0]).toMatch(/^plugins\[0\]\.kinds\[0\]/);
    expect(configProblems(plugin, { patterns: [{ name: 'email', pattern: 'x', maxChars: 3 }] })[0]).toMatch(/^plugins\[0\]\.patterns\[0\]\.name: .*built-in/);
    expect(configProblems(plugin, { patterns: [{ name: 'x', pattern: '(', maxChars: 3 }] })[0]).toMatch(/^plugins\[0\]\.patterns\[0\]\.pattern: not a valid regular expression/);
    expect(configProblems(plugin, { output: 'redact' })[0]).toMatch(/^plugins\[0\]\.output/);
  });
});

describe('pii plugin on answers', () => {
  const rulesOf = async (entry: Record<string, unknown>): Promise<OutputRules | undefined> => (await plugin.create(plugin.schema.parse(entry), pluginEnv(plugin))).outputRules?.(chatContext(['x']), undefined as never);
  const split = (text: string, n: number): string[] => Array.from({ length: n }, (_, i) => text.slice(Math.floor((i * text.length) / n), Math.floor(((i + 1) * text.length) / n)));
  const stream = (rules: OutputRules, pieces: string[]) => {
    const out = new OutputText({ rules: [{ plugin: 'pii', rules }] }, {});
    return { text: pieces.map((p) => out.push('0:c', p)).join('') + out.end('0:c'), blocked: out.blocked };
  };
  const ANSWER = 'Write to bob@example.com, call +1 (415) 555-2671, pay 4111 1111 1111 1111 or DE89 3704 0044 0532 0130 00. Order 2024-000123 ships 2024-01-15.';
  const MASKED = 'Write to [EMAIL], call [PHONE], pay [CARD] or [IBAN]. Order 2024-000123 ships 2024-01-15.';

  it.each([2, 3, 10, ANSWER.length])('masks every kind split across %i pieces, and nothing else', async (n) => {
    expect(stream((await rulesOf({}))!, split(ANSWER, n)).text).toBe(MASKED);
  });

  const HIDDEN = 'Write to bo\u0301b@exa\u0301mple.com, call +1 415\u2800555\u28002671 today.';

  it.each([2, 3, 10, HIDDEN.length])('masks values hidden by accents and braille blanks split across %i pieces', async (n) => {
    expect(stream((await rulesOf({}))!, split(HIDDEN, n)).text).toBe('Write to [EMAIL], call [PHONE] today.');
  });

  it('cuts the answer before the first value with output: block', async () => {
    const { text, blocked } = stream((await rulesOf({ output: 'block' }))!, split(ANSWER, 10));
    expect(text).toBe('Write to ');
    expect(blocked).toMatchObject({ kind: 'email', action: 'block' });
  });

  it('gives no rules with output: allow', async () => {
    expect(await rulesOf({ output: 'allow' })).toBeUndefined();
  });
});
