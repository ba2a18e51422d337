// Which folded text could still begin a term once more text comes: the
// terms' folded forms in a trie, walked from each word start in the window's
// last characters. Only that is held back; text no term can begin with goes
// on at once.
import { foldText, type Accents } from '../../src';

interface Node { next: Map<string, Node> }

const WORD = /[\p{L}\p{N}\p{M}_]/u;
const WHITESPACE = /\s/u;

const lower = (c: string): string => {
  const code = c.charCodeAt(0);
  if (code < 0x80) return code >= 65 && code <= 90 ? String.fromCharCode(code + 32) : c;
  return c.toLowerCase();
};

export class TermPrefixes {
  private readonly root: Node = { next: new Map() };
  /** The longest folded term, in characters. */
  readonly longest: number;

  constructor(terms: readonly string[], accents: Accents = 'fold') {
    let longest = 0;
    for (const term of terms) {
      const folded = foldText(term, accents).trim().replace(/\s+/g, ' ');
      longest = Math.max(longest, folded.length);
      let node = this.root;
      for (const c of lower(folded)) {
        let child = node.next.get(c);
        if (child === undefined) node.next.set(c, (child = { next: new Map() }));
        node = child;
      }
    }
    this.longest = longest;
  }

  /**
   * The first position at or after `from` where a term could begin and
   * `text` ends before it is complete (or just as it is: a word character
   * after it would undo it); text.length when there is none.
   */
  holdFrom(text: string, from: number): number {
    for (let p = Math.max(from, text.length - this.longest + 1, 0); p < text.length; p++) {
      if (p > 0 && WORD.test(text[p - 1])) continue; // after a letter: no term begins here (matcher.ts's word boundary)
      if (this.reachesEnd(text, p)) return p;
    }
    return text.length;
  }

  private reachesEnd(text: string, p: number): boolean {
    let node: Node | undefined = this.root;
    for (let i = p; i < text.length; i++) {
      let c = text[i];
      if (WHITESPACE.test(c)) {
        while (i + 1 < text.length && WHITESPACE.test(text[i + 1])) i++;
        c = ' ';
      }
      for (const l of lower(c)) {
        node = node.next.get(l);
        if (node === undefined) return false;
      }
    }
    return true;
  }
}
