// The Messages API's answer shapes as the gateway writes them: the message
// object, its content blocks, its usage, and the stream's events. Only what a
// chat backend's answer can fill is declared; a native backend's answer is
// relayed as it is and read through the same names.

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export interface TextBlock { type: 'text'; text: string }
export interface ThinkingBlock { type: 'thinking'; thinking: string; signature: string }
export interface ToolUseBlock { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock;

/** Anthropic's usage: `input_tokens` excludes what was read from or written to the prompt cache. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

export type BlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string };

export interface ErrorEvent { type: 'error'; error: { type: string; message: string; details?: Record<string, string> }; request_id?: string }

/** One server-sent event; the caller frames it as `event: <type>\ndata: <json>\n\n`. */
export type MessagesEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | { type: 'content_block_delta'; index: number; delta: BlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: StopReason; stop_sequence: string | null }; usage: Partial<MessagesUsage> & { output_tokens: number } }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | ErrorEvent;
