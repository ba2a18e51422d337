// Which upstreams a Responses or Messages request can be translated for: a
// chat-completions backend in OpenAI's format takes every translation; one
// that speaks only the service interface (format native, the demo backend)
// takes a conversation the interface can say: system, user and assistant
// messages of text, and no tools.
import type { Context } from '../../pipeline/context';
import type { ChatMessage } from '../../contract/types';
import { openaiFormat } from '../formats/openai';
import type { Upstream } from '../upstream';

const PLAIN_ROLES = new Set(['system', 'user', 'assistant']);

const plain = (m: ChatMessage): boolean => PLAIN_ROLES.has(m.role) && typeof m.content === 'string' && m.tool_calls === undefined;

export function translatable(upstream: Upstream, ctx: Context): boolean {
  if (!upstream.apis.includes('chat')) return false;
  if (upstream.format === openaiFormat) return true;
  const chat = ctx.chat;
  return chat !== undefined && chat.model_params.tools === undefined && chat.messages.every(plain);
}
