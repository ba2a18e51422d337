// The transform stage's one way to change a request: every text it forwards,
// as the backend will receive it, through one function, after which the
// request view every later stage reads (ctx.texts: what the content filter
// matches and budgets estimate from) is made again from the rewritten
// request, so a redaction is what the filter and the backend both see.
//
//   onRequest(ctx, state) { rewriteTexts(ctx, (text) => text.replace(EMAIL, (m) => state.placeholder(m))); }
import type { RequestContext } from '../contract/plugin';
import type { RequestSource } from '../pipeline/context';
import { messageTexts } from './chat-messages';
import { paramTexts } from '../request/chat-params';
import { rewriteStrings, type Rewrite } from '../request/rewrite-strings';
import { rewriteInputs } from '../request/inputs';
import { rewriteAudio } from '../request/audio';

/**
 * Rewrites every text of the request through `fn` (message contents and text
 * parts, tool calls' arguments, tool results, tool definitions, instructions,
 * string parameters, the image prompt, the inputs, queries and documents of
 * an input endpoint, an audio request's prompt, input and instructions; for a Responses or Messages request
 * the client's own body, which a backend serving that API receives). Names,
 * ids, roles, types, URLs and encoded data are left as they are. Returns true
 * when a text changed; ctx.texts is then the rewritten request's.
 */
export function rewriteTexts(ctx: RequestContext, fn: Rewrite): boolean {
  const source = (ctx as RequestContext & { source?: RequestSource }).source;
  if (ctx.image !== undefined) {
    const image = ctx.image;
    const prompt = fn(image.prompt);
    const model_params = rewriteStrings(image.model_params, fn, false, true);
    if (prompt === image.prompt && model_params === image.model_params) return false;
    const texts = [prompt];
    paramTexts(model_params, texts);
    ctx.image = { ...image, prompt, model_params, texts };
    ctx.texts = texts;
    return true;
  }
  if (ctx.inputs !== undefined) {
    const inputs = rewriteInputs(ctx.inputs, fn);
    if (inputs === undefined) return false;
    ctx.inputs = inputs;
    ctx.texts = inputs.texts;
    return true;
  }
  if (ctx.audio !== undefined) {
    const audio = rewriteAudio(ctx.audio, fn);
    if (audio === undefined) return false;
    ctx.audio = audio;
    ctx.texts = audio.texts;
    return true;
  }
  if (source !== undefined) {
    if (!source.rewriteTexts(fn)) return false;
    const view = source.view();
    ctx.chat = view.chat;
    ctx.texts = view.texts;
    return true;
  }
  const chat = ctx.chat;
  if (chat === undefined) return false;
  const messages = rewriteStrings(chat.messages, fn, false, true);
  const model_params = rewriteStrings(chat.model_params, fn, false, true);
  if (messages === chat.messages && model_params === chat.model_params) return false;
  const texts: string[] = [];
  messageTexts(messages, texts);
  paramTexts(model_params, texts);
  ctx.chat = { ...chat, messages, model_params, texts };
  ctx.texts = texts;
  return true;
}
