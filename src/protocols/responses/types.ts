// The shapes of OpenAI's Responses API this folder reads and writes: the
// request as parsed (known fields typed, every other field kept), the items
// of its input, and the response, output items and stream events it builds.
// Kinds a chat backend cannot take are typed only as far as `type`.

export type Role = 'user' | 'assistant' | 'system' | 'developer';

export interface InputText { type: 'input_text'; text: string }
export interface OutputText { type: 'output_text'; text: string; annotations?: unknown[]; logprobs?: unknown[] }
export interface RefusalPart { type: 'refusal'; refusal: string }
export interface InputImage { type: 'input_image'; image_url?: string | null; file_id?: string | null; detail?: string | null }
/** A message part: the kinds above, or any other (input_file, input_audio, ...), typed only by `type`. */
export type ContentPart = InputText | OutputText | RefusalPart | InputImage | { type: string; [field: string]: unknown };

export interface MessageItem { type?: 'message'; id?: string; role: Role; content: string | ContentPart[]; status?: string }
export interface FunctionCallItem { type: 'function_call'; id?: string; call_id: string; name: string; arguments: string; namespace?: string | null; status?: string }
export interface ToolOutputItem { type: 'function_call_output' | 'custom_tool_call_output'; id?: string | null; call_id: string; output: string | ContentPart[] }
export interface CustomToolCallItem { type: 'custom_tool_call'; id?: string; call_id: string; name: string; input: string; namespace?: string | null }
export interface ReasoningItem { type: 'reasoning'; id?: string; summary?: { text: string }[]; content?: { text: string }[] | null; encrypted_content?: string | null }
export interface LocalShellCallItem { type: 'local_shell_call'; id?: string | null; call_id?: string | null; action: Record<string, unknown> }
export interface LocalShellOutputItem { type: 'local_shell_call_output'; id: string; output: string }
/** Tools offered from this point of the conversation on (the Codex CLI sends its own this way). */
export interface AdditionalToolsItem { type: 'additional_tools'; id?: string; role?: string; tools: Tool[] }
/** Any other item (web_search_call, item_reference, mcp_call, ...), typed only by `type`. */
export interface OtherItem { type?: string | null; id?: string | null; [field: string]: unknown }
export type InputItem = MessageItem | FunctionCallItem | ToolOutputItem | CustomToolCallItem | ReasoningItem | LocalShellCallItem | LocalShellOutputItem | AdditionalToolsItem | OtherItem;

export interface FunctionTool { type: 'function'; name: string; description?: string | null; parameters?: Record<string, unknown> | null; strict?: boolean | null }
export type CustomToolFormat = { type: 'text' } | { type: 'grammar'; syntax?: string | null; definition: string } | { type: string; [field: string]: unknown };
/** A free-form tool: the model writes its input as plain text, in the format's grammar when it has one. */
export interface CustomTool { type: 'custom'; name: string; description?: string | null; format?: CustomToolFormat | null }
export interface NamespaceTool { type: 'namespace'; name: string; description?: string | null; tools: Tool[] }
/** Any other tool: hosted ones (web_search, file_search, code_interpreter, mcp, ...). */
export type Tool = FunctionTool | CustomTool | NamespaceTool | { type: string; name?: string; [field: string]: unknown };

export type ToolChoice =
  | 'none' | 'auto' | 'required'
  | { type: 'function' | 'custom'; name: string }
  | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: { type: string; name?: string; namespace?: string }[] }
  | { type: string };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean | null; description?: string | null };

/** The request as parsed: the fields below are type-checked; any other top-level field is kept as sent. */
export interface ResponsesRequest {
  model: string;
  input?: string | InputItem[];
  instructions?: string | null;
  tools?: Tool[] | null;
  tool_choice?: ToolChoice | null;
  parallel_tool_calls?: boolean | null;
  text?: { format?: TextFormat | null; verbosity?: string | null } | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  max_output_tokens?: number | null;
  max_tool_calls?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_logprobs?: number | null;
  metadata?: Record<string, string> | null;
  store?: boolean | null;
  stream?: boolean | null;
  previous_response_id?: string | null;
  include?: string[] | null;
  truncation?: 'auto' | 'disabled' | null;
  user?: string | null;
  safety_identifier?: string | null;
  prompt_cache_key?: string | null;
  client_metadata?: Record<string, unknown> | null;
  service_tier?: string | null;
  background?: boolean | null;
  [field: string]: unknown;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface OutputTextPart { type: 'output_text'; annotations: unknown[]; logprobs: unknown[]; text: string }
export interface OutputMessage { id: string; type: 'message'; status: ItemStatus; content: OutputTextPart[]; role: 'assistant' }
export interface OutputFunctionCall { id: string; type: 'function_call'; status: ItemStatus; arguments: string; call_id: string; name: string; namespace?: string }
export interface OutputCustomToolCall { id: string; type: 'custom_tool_call'; status: ItemStatus; call_id: string; name: string; input: string; namespace?: string }
export interface OutputReasoning { id: string; type: 'reasoning'; summary: { type: 'summary_text'; text: string }[] }
export type OutputItem = OutputMessage | OutputFunctionCall | OutputCustomToolCall | OutputReasoning;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** `cancelled`: ended by POST /v1/responses/{id}/cancel while it ran. */
export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

/** The response object (`object: "response"`), as the JSON answer and the stream's lifecycle events carry it. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  completed_at: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  output: OutputItem[];
  usage: ResponsesUsage | null;
  [field: string]: unknown;
}

/** One stream event; the caller frames it as `event: <type>\ndata: <json>\n\n`. */
export interface ResponsesEvent { type: string; sequence_number: number; [field: string]: unknown }

/** What the caller knows of the answer it is building: ids, times, the client's model id and the request (for the fields a response echoes). */
export interface ResponseMeta {
  /** The response id, `resp_…` (see newResponseId). */
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** The model id as the client sent it. */
  model: string;
  request: ResponsesRequest;
  /** The stored items the request continues from (previous_response_id), as given to toChat: tools they offered are named back too. */
  history?: readonly InputItem[];
  /** Makes item ids (`msg_…`, `fc_…`, `ctc_…`, `rs_…`); random by default. */
  newId?: (prefix: string) => string;
  /** Milliseconds since the epoch, for completed_at; Date.now by default. */
  now?: () => number;
}
