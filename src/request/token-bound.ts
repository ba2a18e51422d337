// An upper bound on the prompt tokens a backend can count for a request,
// whatever its tokenizer and language: what a hard budget reserves, so that
// no prompt, however it tokenizes, can spend past the budget. (The typical
// estimate, about four characters a token, is a quarter of the truth for
// Chinese or Japanese, where a character is often a token of its own.)
//
// Why UTF-8 bytes bound the tokens: byte-level BPE (GPT, Llama 3, Qwen,
// DeepSeek) starts from one token per byte and only merges; SentencePiece
// with byte fallback (Llama 2, Mistral, Gemma) spells a piece it lacks as its
// bytes. No token of text is shorter than one byte. What a tokenizer adds
// beyond the text is the chat template's: per message a role header and an
// end-of-turn marker (5 tokens on ChatML, Llama 3 and Gemma), a leading space
// marker, the punctuation written around a parameter's key or value; and per
// request the start-of-text token, the generation prompt and a date or
// default system line. PER_TEXT and PER_REQUEST cover those with room to
// spare. A template that writes long fixed instructions of its own (a
// tool-use preamble) is beyond this bound.
//
// Cheap: one native byte count per text (no copy, no compilation), and only
// for requests under a hard budget.

/** Template tokens around one text: role header, end-of-turn, a space marker, a key's punctuation. */
export const PER_TEXT_TOKENS = 8;
/** Template tokens of one request: start of text, generation prompt, a date or default system line. */
export const PER_REQUEST_TOKENS = 32;

/** What a bound reads of a request: the texts it forwards, and the tokens it gives as ids (embeddings' token arrays). */
interface Texts {
  readonly texts: readonly string[];
  readonly inputs?: { readonly tokenIds: number };
}

/** The most prompt tokens any tokenizer can count for the request's texts (see above). */
export function promptTokenBound(ctx: Texts): number {
  let tokens = PER_REQUEST_TOKENS + (ctx.inputs?.tokenIds ?? 0);
  for (const text of ctx.texts) tokens += Buffer.byteLength(text, 'utf8') + PER_TEXT_TOKENS;
  return tokens;
}
