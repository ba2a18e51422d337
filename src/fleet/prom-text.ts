// Reads chosen series from a Prometheus text exposition (format 0.0.4, and
// OpenMetrics text, which shares its sample lines). An engine's /metrics is
// mostly histogram buckets the gateway never needs, scraped every few tens of
// milliseconds, so only the lines of the wanted names are found (by search,
// not by splitting the whole text) and those are parsed strictly: a malformed
// one throws, and the scrape counts as failed rather than guessed at.

/** Every sample value of each wanted name that appears, in order; names absent from the text are absent from the map. */
export function readSeries(text: string, names: Iterable<string>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const name of names) {
    for (let at = text.indexOf(name); at !== -1; at = text.indexOf(name, at + name.length)) {
      if (at > 0 && text.charCodeAt(at - 1) !== 10) continue; // not at a line's start
      const next = text[at + name.length];
      if (next !== '{' && next !== ' ' && next !== '\t') continue; // a longer name that starts the same
      let end = text.indexOf('\n', at);
      if (end === -1) end = text.length;
      const value = parseSample(text.slice(at, end).replace(/\r$/, ''), name.length);
      const values = out.get(name);
      if (values) values.push(value); else out.set(name, [value]);
    }
  }
  return out;
}

const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const VALUE = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Inf|inf|NaN)$/;
const TIMESTAMP = /^-?\d+(?:\.\d+)?$/;

/** The value of one sample line whose name ends at `from`; throws on anything the format does not allow. */
export function parseSample(line: string, from: number): number {
  let i = from;
  const fail = (what: string): never => { throw new Error(`malformed sample (${what}) at column ${i + 1}: ${line.slice(0, 120)}`); };
  const skipBlanks = () => { while (line[i] === ' ' || line[i] === '\t') i++; };
  if (line[i] === '{') {
    i++;
    for (;;) {
      skipBlanks();
      if (line[i] === '}') break;
      LABEL_NAME.lastIndex = i;
      if (!LABEL_NAME.test(line)) fail('label name');
      i = LABEL_NAME.lastIndex;
      skipBlanks();
      if (line[i++] !== '=') fail('expected =');
      skipBlanks();
      if (line[i++] !== '"') fail('expected "');
      while (i < line.length && line[i] !== '"') {
        if (line[i] === '\\') { if (!'\\"n'.includes(line[i + 1] ?? 'x')) fail('escape'); i++; }
        i++;
      }
      if (line[i++] !== '"') fail('unterminated label value');
      skipBlanks();
      if (line[i] === ',') { i++; continue; }
      if (line[i] !== '}') fail('expected , or }');
    }
    i++;
  }
  if (line[i] !== ' ' && line[i] !== '\t') fail('expected a blank before the value');
  const fields = line.slice(i).trim().split(/[ \t]+/);
  if (fields.length > 2 || !VALUE.test(fields[0]) || (fields.length === 2 && !TIMESTAMP.test(fields[1]))) fail('value');
  const v = fields[0].replace(/^([+-]?)inf$/i, '$1Infinity');
  return Number(v);
}
