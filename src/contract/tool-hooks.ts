// What an MCP tool call's hooks (onToolCall, toolResultRules, onToolResult in
// the plugin contract) are given: the call and the server's result. A leaf of
// the contract: it imports only the request types beneath it.
import type { Principal } from './types';

/**
 * One MCP tools/call, as its hooks see it: who calls which tool of which
 * server, with what. Made per call (a batch's calls each get their own, and
 * each plugin's `state()` a fresh state per call).
 */
export interface ToolCallContext {
  /** The request's id (x-request-id): the one the access line names. */
  readonly id: string;
  readonly principal: Principal;
  /** The configured server's name. */
  readonly server: string;
  /** The tool's name, as the server knows it. */
  readonly tool: string;
  /** params.arguments as the server will receive them ({} when the call gives none). Read-only: rewrite through rewriteArguments. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** Every string of the arguments, keys and values, in order: what a filter matches. */
  readonly texts: readonly string[];
  /**
   * Rewrites every string of the arguments (keys too) through `fn`; true when
   * one changed. What it changes is what the server receives and what later
   * hooks read (`arguments`, `texts`). Numbers, booleans and the structure stay.
   */
  rewriteArguments(fn: (text: string) => string): boolean;
  /** Aborted once the client's request has closed. */
  readonly signal: AbortSignal;
}

/**
 * A tool's result (the specification's CallToolResult): content blocks
 * (text, image, audio, resource links, embedded resources), optional
 * structured content, and whether the tool failed.
 */
export interface ToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  readonly [field: string]: unknown;
}
