import { CustomInputReader, GRAMMAR_MAX, customInput, customParameters } from '../../../../src/protocols/responses/custom-tools';

const inputDescription = (format: Parameters<typeof customParameters>[0]) =>
  (customParameters(format) as any).properties.input.description as string;

describe('customParameters', () => {
  it('is one required string, `input`, and nothing else', () => {
    expect(customParameters(undefined)).toEqual({
      type: 'object',
      properties: { input: { type: 'string', description: "The tool's input: free-form text, as the tool's description says (not JSON)." } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(inputDescription({ type: 'text' })).toBe(inputDescription(null));
  });

  it('shows the grammar in the input\'s description, with its syntax', () => {
    expect(inputDescription({ type: 'grammar', syntax: 'lark', definition: 'start: WORD\nWORD: /\\w+/' }))
      .toBe("The tool's input: raw text (not JSON) matching this lark grammar:\nstart: WORD\nWORD: /\\w+/");
    expect(inputDescription({ type: 'grammar', syntax: 'regex', definition: '^\\d+$' })).toMatch(/this regex grammar:\n\^\\d\+\$$/);
  });

  it('clips a long grammar, says so, and never cuts a surrogate pair in two', () => {
    const long = inputDescription({ type: 'grammar', syntax: 'lark', definition: 'x'.repeat(GRAMMAR_MAX * 3) });
    expect(long).toContain(`${'x'.repeat(GRAMMAR_MAX)}\n… (clipped: the grammar has ${GRAMMAR_MAX * 3} characters)`);
    expect(long).not.toContain('x'.repeat(GRAMMAR_MAX + 1));
    const astral = inputDescription({ type: 'grammar', definition: `${'x'.repeat(GRAMMAR_MAX - 1)}😀${'x'.repeat(10)}` });
    expect(astral).toContain(`${'x'.repeat(GRAMMAR_MAX - 1)}\n… (clipped`);
    expect(astral).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

// [what, arguments as the model wrote them, the input read out of them]
const CASES: Array<[string, string, string]> = [
  ['the one argument', '{"input": "await tools.exec_command({ cmd: \\"ls\\" });\\ntext(r.output);"}', 'await tools.exec_command({ cmd: "ls" });\ntext(r.output);'],
  ['whitespace between the tokens', ' \n{ "input" :\t"x"}', 'x'],
  ['every JSON escape', String.raw`{"input":"q\" b\\ s\/ \b\f\n\r\t é \u00e9 \ud83d\ude00"}`, 'q" b\\ s/ \b\f\n\r\t é é 😀'],
  ['raw characters JSON does not allow, kept', '{"input":"line 1\nline 2"}', 'line 1\nline 2'],
  ['another key first', '{"timeout": 5, "input": "ls"}', 'ls'],
  ['keys after the input, ignored', '{"input":"ls","yield_time_ms":100}', 'ls'],
  ['a call cut off inside the input (token cap)', '{"input":"echo hel', 'echo hel'],
  ['a call cut off inside an escape', '{"input":"a\\u00', 'a'],
  ['the input written as is, not JSON', 'await tools.exec_command({ cmd: "ls" })', 'await tools.exec_command({ cmd: "ls" })'],
  ['JSON without a string input', '{"input": 5}', '{"input": 5}'],
  ['a head cut off before the input starts', '{"inp', '{"inp'],
  ['no arguments', '', ''],
  ['an empty input', '{"input":""}', ''],
];

/** Reads `args` in the given pieces; returns each push's text and end()'s. */
function readInPieces(pieces: string[]): string[] {
  const reader = new CustomInputReader();
  return [...pieces.map((p) => reader.push(p)), reader.end()];
}

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('customInput and CustomInputReader', () => {
  it.each(CASES)('%s', (_what, args, input) => {
    expect(customInput(args)).toBe(input);
  });

  it.each(CASES)('reads %s the same in any pieces, no character lost or doubled, no half surrogate sent', (_what, args, input) => {
    const splits: string[][] = [[args], args.split('')];
    for (let i = 1; i < args.length; i++) splits.push([args.slice(0, i), args.slice(i)]);
    for (const pieces of splits) {
      const texts = readInPieces(pieces);
      expect(texts.join('')).toBe(input);
      for (const text of texts) expect(text).not.toMatch(loneSurrogate);
    }
  });

  it('sends the input as it arrives once the arguments open with it', () => {
    expect(readInPieces(['{"in', 'put": "ec', 'ho hi', '"}'])).toEqual(['', 'ec', 'ho hi', '', '']);
    // An escape split across pieces is sent whole with the piece that ends it.
    expect(readInPieces(['{"input":"a\\', 'nb\\u00', 'e9"}'])).toEqual(['a', '\nb', 'é', '']);
  });

  it('sends the input whole at the end when the arguments do not open with it', () => {
    expect(readInPieces(['{"timeout": 5, ', '"input": "ls"}'])).toEqual(['', '', 'ls']);
    expect(readInPieces(['ls ', '-la'])).toEqual(['', '', 'ls -la']);
  });
});
