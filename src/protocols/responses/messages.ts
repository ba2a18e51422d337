// Input items as chat messages. Messages keep their turn; system and
// developer messages become `system` (the role every chat template knows),
// and the ones before the first turn merge with the instructions into one
// (many templates take a single leading system message). Tool calls become
// an assistant message's tool_calls, consecutive ones merged; their results
// become tool messages. Reasoning and items only OpenAI runs are dropped;
// additional_tools items join the request's tools (see tools.ts).
import type { ChatMessage, ContentPart as ChatPart, ToolCall } from '../../contract/types';
import { chatToolName } from './tools';
import type { ContentPart, CustomToolCallItem, FunctionCallItem, InputImage, InputItem, LocalShellCallItem, LocalShellOutputItem, MessageItem, ToolOutputItem } from './types';

// OpenAI's item and part types, so a dropped one is named by its type; any other is "other" (names feed a metric label).
const ITEM_TYPES = new Set(['reasoning', 'item_reference', 'file_search_call', 'computer_call', 'computer_call_output', 'web_search_call',
  'tool_search_call', 'tool_search_output', 'compaction', 'compaction_trigger', 'image_generation_call', 'code_interpreter_call',
  'shell_call', 'shell_call_output', 'apply_patch_call', 'apply_patch_call_output', 'mcp_list_tools', 'mcp_approval_request',
  'mcp_approval_response', 'mcp_call', 'program', 'program_output']);
const PART_TYPES = new Set(['input_image', 'input_file', 'input_audio']);

/** Appends the items to `messages` in chat's form; what a chat backend cannot take is named in `dropped`. */
export function itemsToMessages(items: readonly InputItem[], messages: ChatMessage[], dropped: Set<string>): void {
  for (const item of items) {
    const type = item.type ?? ('role' in item ? 'message' : 'item_reference');
    switch (type) {
      case 'message': pushMessage(item as MessageItem, messages, dropped); break;
      case 'function_call': {
        const call = item as FunctionCallItem;
        pushToolCall(messages, call.call_id, chatToolName(call.namespace, call.name), call.arguments);
        break;
      }
      // Chat has no free-form calls: the input travels as the one argument of a function call (see custom-tools.ts).
      case 'custom_tool_call': {
        const call = item as CustomToolCallItem;
        pushToolCall(messages, call.call_id, chatToolName(call.namespace, call.name), JSON.stringify({ input: call.input }));
        break;
      }
      case 'local_shell_call': {
        const call = item as LocalShellCallItem;
        pushToolCall(messages, call.call_id ?? call.id ?? '', 'local_shell', JSON.stringify(call.action));
        break;
      }
      case 'function_call_output': case 'custom_tool_call_output': {
        const result = item as ToolOutputItem;
        messages.push({ role: 'tool', tool_call_id: result.call_id, content: joinText(result.output, dropped) });
        break;
      }
      // Its id is the call's.
      case 'local_shell_call_output': messages.push({ role: 'tool', tool_call_id: (item as LocalShellOutputItem).id, content: (item as LocalShellOutputItem).output }); break;
      case 'additional_tools': break;
      default: dropped.add(`input:${ITEM_TYPES.has(type) ? type : 'other'}`);
    }
  }
}

function pushMessage(item: MessageItem, messages: ChatMessage[], dropped: Set<string>): void {
  if (item.role === 'user') {
    const parts = typeof item.content === 'string' ? item.content : userParts(item.content, dropped);
    // A message whose every part was dropped keeps its turn, empty: chat servers refuse an empty list of parts.
    messages.push({ role: 'user', content: parts.length === 0 ? '' : parts });
    return;
  }
  const content = joinText(item.content, dropped);
  if (item.role === 'assistant') {
    messages.push({ role: 'assistant', content });
    return;
  }
  const leading = messages.length === 1 && messages[0].role === 'system';
  if (leading) messages[0] = { role: 'system', content: `${messages[0].content as string}\n\n${content}` };
  else messages.push({ role: 'system', content });
}

/** Adds a call to the assistant message just before (its text, or the calls before it), or starts one. */
function pushToolCall(messages: ChatMessage[], id: string, name: string, args: string): void {
  const call: ToolCall = { id, type: 'function', function: { name, arguments: args } };
  const last = messages.at(-1);
  if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
  else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function userParts(parts: readonly ContentPart[], dropped: Set<string>): ChatPart[] {
  const out: ChatPart[] = [];
  for (const part of parts) {
    const text = textOf(part);
    if (text !== undefined) out.push({ type: 'text', text });
    else if (part.type === 'input_image' && (part as InputImage).image_url) out.push(imagePart(part as InputImage));
    else dropPart(part, dropped);
  }
  return out;
}

function imagePart(image: InputImage): ChatPart {
  const detail = image.detail;
  return { type: 'image_url', image_url: detail === 'auto' || detail === 'low' || detail === 'high' ? { url: image.image_url!, detail } : { url: image.image_url! } };
}

/**
 * The text of a content that chat takes only as text (system, assistant and tool messages): parts on lines of
 * their own, a new line added only where a part does not end one (Codex's exec output comes as a header part
 * ending in "Output:\n", then the output).
 */
function joinText(content: string | readonly ContentPart[], dropped: Set<string>): string {
  if (typeof content === 'string') return content;
  let joined = '';
  let first = true;
  for (const part of content) {
    const text = textOf(part);
    if (text === undefined) dropPart(part, dropped);
    else {
      joined += first || joined.endsWith('\n') ? text : `\n${text}`;
      first = false;
    }
  }
  return joined;
}

function textOf(part: ContentPart): string | undefined {
  if (part.type === 'input_text' || part.type === 'output_text') return (part as { text: string }).text;
  if (part.type === 'refusal') return (part as { refusal: string }).refusal;
  return undefined;
}

const dropPart = (part: ContentPart, dropped: Set<string>) => dropped.add(`content:${PART_TYPES.has(part.type) ? part.type : 'other'}`);
