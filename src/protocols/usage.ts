// The token usage a protocol module reads from an answer, in one shape for
// every client protocol, so budgets and metrics need not know which one ran.

/**
 * `input_tokens` counts every prompt token the backend processed, cached or
 * not; `cached_input_tokens` is the part of it read from a prompt cache and
 * `cache_creation_input_tokens` the part written to one (Anthropic's
 * backends report both; a chat backend reports only reads).
 */
export interface ProtocolUsage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens?: number;
  reasoning_tokens?: number;
  cache_creation_input_tokens?: number;
}
