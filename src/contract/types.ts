// The request view's types: who is calling, where the request goes, what it
// asks. A leaf: it imports nothing from the core, so the plugin contract can
// build on it and stay stable.
import type { Redis, Cluster } from 'ioredis';

/** The key a request authenticated with. */
export interface Principal {
  id: string;
  org: string | null;
  /** The team the key belongs to (its entry's `team`), or null. */
  readonly team: string | null;
  /**
   * What tells this key from any other that ever had its id: a runtime key's
   * identity, minted when it is made and kept in its record, so a key made
   * again under a revoked key's id is another key. Absent for a config key
   * (the file is the operator's: an id kept there is the same key).
   */
  readonly uid?: string;
  /** Whether the key's allow-list lets it use a model id (and its team's and its org's, when they have one). */
  mayUse: (model: string) => boolean;
  /** Whether that allow-list admits every model (none given, or "*"). */
  anyModel: boolean;
  /**
   * The key's entry, from the config file or the admin API: its limits,
   * priority and the fields plugins add. Policy per key is compiled from
   * this, once per principal: a key changed at runtime is a new principal,
   * so a cache keyed on the principal object sees the change.
   */
  readonly entry: KeyEntry;
}

/** What a key's entry holds beyond its id and digest (keys[] in the config, or a key made by the admin API). */
export interface KeyEntry {
  readonly org?: string;
  readonly team?: string;
  readonly models?: readonly string[];
  /** The core's `concurrency` and the plugins' fields (the rate-limit plugin's requests, tokens, windowSeconds). */
  readonly limits?: Readonly<Record<string, unknown>>;
  readonly priority?: 'high' | 'normal' | 'low';
  /** Present when the key may name its end users (docs/teams.md#end-users): from the body's user field, or `header` (lower-case) when given. */
  readonly endUsers?: { readonly header?: string };
  readonly [field: string]: unknown;
}

/**
 * A team: keys of one org that share an allow-list and budgets (the config's
 * `teams`, or made through the admin API). A changed team is another object,
 * so a cache keyed on the team object (a plugin's compiled budgets) sees it.
 */
export interface Team {
  readonly name: string;
  readonly org: string;
  readonly models?: readonly string[];
  /** The core's `concurrency` and the plugins' fields, as in a key's or an org's limits. */
  readonly limits?: Readonly<Record<string, unknown>>;
}

/** The teams in force, by name (Services.teams). */
export interface TeamLookup {
  get(name: string): Team | undefined;
}

/** The API a client speaks: chat completions, OpenAI's Responses API, or Anthropic's Messages API. */
export type ClientProtocol = 'chat' | 'responses' | 'messages';

/** Which message forms a route accepts: the interface's (default) or OpenAI's. */
export type Dialect = 'interface' | 'openai';

export interface Route {
  index: number;
  upstream: string;
  /** The model name sent upstream; undefined keeps the client's id. */
  upstreamModel?: string;
  dialect: Dialect;
  /** Models tried in order when this route's backends cannot answer (each with its own route). */
  fallbacks: readonly string[];
  /** Backend error codes (of a 4xx) that also send the request on to the fallbacks, e.g. context_length_exceeded. */
  failoverOn: readonly string[];
  /** A stream cut after content was sent goes on, on a fallback that takes an assistant prefix. */
  continueOnFailure: boolean;
  /** Set when this route's backends continue a given assistant message: the body fields that ask for it. */
  assistantPrefix?: { params: Readonly<Record<string, unknown>> };
  /** Responses and Messages requests translated for a chat backend: tools only the protocol's provider runs are dropped, or refused. */
  hostedTools: 'drop' | 'refuse';
  /** Request fields this route refuses (a 400 naming the field) or drops before forwarding. */
  fields?: FieldRules;
}

/** A route's rules for named request fields, at the top level or in model_params. */
export interface FieldRules {
  refuse: readonly string[];
  drop: readonly string[];
}

export interface TextPart { type: 'text'; text: string }
export interface ImagePart { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
export type ContentPart = TextPart | ImagePart;
export interface ToolCall { id: string; type: 'function'; function: { name: string; arguments: string } }

/** A message of either dialect; with the default dialect only role and a string content are set. */
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  refusal?: string | null;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  model_params: Record<string, unknown>;
  /** Every piece of text the backend will read: messages, tool calls and results, tool definitions, stop strings. */
  texts: string[];
}

export interface ImageRequest {
  model: string;
  prompt: string;
  model_params: Record<string, unknown>;
  /** Every piece of text the backend will read: the prompt and any string parameter. */
  texts: string[];
}

/**
 * A request of an input endpoint (embeddings, rerank, score, moderations):
 * texts a model reads, encodes or scores, and nothing generated.
 */
export interface InputsRequest {
  model: string;
  /** The body as the backend receives it (the model renamed as it is sent); the texts in it as the transform stage left them. */
  body: Readonly<Record<string, unknown>>;
  /** The body's fields that hold the texts (input; query and documents; text_1 and text_2). */
  fields: readonly string[];
  /** Every text the backend will read, each input and document its own. */
  texts: string[];
  /** Tokens the request gives as ids rather than text (embeddings' token arrays): estimates and bounds count them one for one. */
  tokenIds: number;
}

/**
 * A request of an audio endpoint: an uploaded file to transcribe or
 * translate, or a text to speak (docs/endpoints.md#audio).
 */
export interface AudioRequest {
  model: string;
  /** The text fields the backend reads (a transcription's prompt, speech's input and instructions), by name. */
  fields: Readonly<Record<string, string>>;
  /** Every text the backend will read: the values of `fields`. */
  texts: string[];
  /** Speech's JSON body as the client sent it (the backend gets it with `fields` as they stand); undefined for an upload. */
  body?: Readonly<Record<string, unknown>>;
  /** Seconds of the uploaded audio when its header says (WAV); undefined otherwise, or for speech. */
  seconds?: number;
  /** The most seconds of audio the upload can hold, as a budget reserves it; 0 for speech. */
  boundSeconds: number;
  /** Characters of speech's input (what it is priced by); 0 for an upload. */
  characters: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** True when the backend reported none and the gateway estimated it. */
  estimated: boolean;
  /** Prompt tokens read from the backend's prompt cache (part of prompt_tokens), when it said. */
  cached_tokens?: number;
  /** Completion tokens spent on reasoning (part of completion_tokens), when it said. */
  reasoning_tokens?: number;
  /** Seconds of audio transcribed or translated (the backend's, else the file's). */
  audio_seconds?: number;
  /** Characters of text spoken (speech's input). */
  characters?: number;
}

/** A model's price: dollars per token of each kind, and per image by size ("*": any size). */
export interface Price {
  readonly input: number;
  readonly cachedInput: number;
  readonly output: number;
  readonly images?: Readonly<Record<string, number>>;
  /** Dollars per second of audio, and per character of speech's input. */
  readonly audioSecond?: number;
  readonly character?: number;
}

/** The config's prices (`pricing`), compiled: the first entry whose glob matches a model prices it. */
export interface PriceList {
  /** True when the config names no price: nothing is priced, and nothing costs. */
  readonly empty: boolean;
  of(model: string): Price | undefined;
}

/** The shared Redis connection: one server or a cluster. */
export type RedisClient = Redis | Cluster;
