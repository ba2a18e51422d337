// The rules an answer's text (and a tool result's) is checked against as it
// flows: what a plugin's outputRules and toolResultRules return, and what
// their scan finds. A leaf of the contract.

/**
 * What a rule found in an answer's text: [start, end) in the text given to
 * OutputRules.scan, and what to do there.
 */
export interface OutputMatch {
  start: number;
  end: number;
  /** What kind of rule matched, for the count (a bounded label: "term", "pattern", "email"...); never the text. */
  kind: string;
  /** block: the answer ends before the match (finish reason content_filter); mask: the match is replaced and the answer goes on. */
  action: 'block' | 'mask';
  /** What a masked match becomes (default: nothing). */
  replacement?: string;
}

export interface OutputScan {
  /** The matches, in order of their start, not overlapping. */
  matches: readonly OutputMatch[];
  /**
   * The first position that could still begin a match once more text comes
   * (text.length: none could). The text from there on is held back; what
   * comes before it goes to the client at once.
   */
  holdFrom: number;
}

/**
 * A plugin's rules for an answer's text (content, tool-call arguments), in
 * every protocol and stream kind alike: the core keeps a sliding window per
 * choice and part, calls `scan` on it, and releases, masks or cuts. Built
 * once when the plugin is created; `scan` is called on the stream's hot path
 * and must not compile anything.
 */
export interface OutputRules {
  /** The longest text a match can span: the most the window holds back (in the characters the rules count). */
  readonly maxHoldChars: number;
  /** False: reasoning text (a model's thinking, its summaries) is left alone; it is read otherwise. */
  readonly readsReasoning?: boolean;
  /**
   * The matches in `text` and where holding must start. Positions before
   * `from` are context, for lookbehinds: matches starting there are ignored.
   * Text from `from` on may have gone out already (the end of a stretch the
   * next one continues): a match found there still counts. A match that
   * reaches the end of the text is acted on only once more text follows it
   * or the answer ends. The text is the answer as a client reads it: JSON
   * escapes decoded, and any run of whitespace, invisible characters and
   * marks longer than 16 shortened to 16 and one of each kind it holds.
   */
  scan(text: string, from: number): OutputScan;
}
