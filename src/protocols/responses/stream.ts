// A chat-completions stream as a Responses stream, one chunk at a time. The
// events are OpenAI's, in its order: response.created and .in_progress first;
// per output item .output_item.added, its deltas, its .done events and
// .output_item.done; then response.completed (or .incomplete, or error and
// response.failed). Reasoning deltas stream as a reasoning item's summary
// text, the part every Responses client shows (raw reasoning_text is hidden
// by default). Each chat tool call (by its `index`, interleaved or not) is a
// function_call item of its own whose arguments stream as they arrive, or,
// when it calls a custom tool, a custom_tool_call item whose input streams as
// it is read out of the arguments (see custom-tools.ts). Items
// close when the chunk with finish_reason arrives; the terminal event waits
// for end(), after the usage-only chunk.
//
//   const s = new ResponsesStream(meta);
//   send(s.start()); for each chunk: send(s.push(chunk)); send(s.end());   // or s.fail(error) after a failure
import { isObject, type Json } from '../json';
import { chatUsage, type ProtocolUsage } from '../usage';
import { reasoningOf } from './from-chat';
import { CustomInputReader } from './custom-tools';
import { customCallItem, functionCallItem, itemStatusOf, messageItem, newId, outcomeOf, outputText, reasoningItem, responseObject } from './output';
import { offeredTools, toolNames, type ToolName } from './tools';
import type { ItemStatus, OutputItem, ResponseMeta, ResponseObject, ResponsesEvent } from './types';

/** An item being streamed; `text` is its text, a function's arguments or a custom tool's input so far. */
interface OpenItem {
  kind: 'reasoning' | 'message' | 'function_call' | 'custom_tool_call';
  index: number; id: string; text: string; callId?: string; fn?: ToolName; reader?: CustomInputReader;
}

export class ResponsesStream {
  /** The usage the backend reported, once it has. */
  usage: ProtocolUsage | undefined;
  /** The final response (as the JSON answer would be), after end() or fail(): for storage. */
  response: ResponseObject | undefined;
  private state: 'new' | 'open' | 'closed' = 'new';
  private seq = 0;
  private readonly output: OutputItem[] = [];
  private reasoning: OpenItem | undefined;
  private message: OpenItem | undefined;
  private readonly calls = new Map<number, OpenItem>();
  private finish: unknown;
  private readonly makeId: (prefix: string) => string;
  private readonly names: Map<string, ToolName>;

  constructor(private readonly meta: ResponseMeta) {
    this.makeId = meta.newId ?? newId;
    this.names = toolNames(offeredTools(meta.request, meta.history));
  }

  get done(): boolean { return this.state === 'closed'; }

  /** response.created and response.in_progress; push() sends them itself if this was not called. */
  start(): ResponsesEvent[] {
    if (this.state !== 'new') return [];
    this.state = 'open';
    const out: ResponsesEvent[] = [];
    this.emit(out, 'response.created', { response: responseObject(this.meta, 'in_progress', { output: [] }) });
    this.emit(out, 'response.in_progress', { response: responseObject(this.meta, 'in_progress', { output: [] }) });
    return out;
  }

  push(chunk: object): ResponsesEvent[] {
    if (this.state === 'closed') return [];
    const out = this.start();
    const c = chunk as Json;
    this.usage = chatUsage(c.usage) ?? this.usage;
    const choice = Array.isArray(c.choices) ? c.choices.find((ch) => isObject(ch) && (ch.index ?? 0) === 0) as Json | undefined : undefined;
    if (!choice) return out;
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = reasoningOf(delta);
    if (reasoning !== '') this.reasoningDelta(reasoning, out);
    if (typeof delta.content === 'string' && delta.content !== '') this.textDelta(delta.content, out);
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isObject(call)) this.callDelta(call, out);
    if (typeof choice.finish_reason === 'string') {
      this.finish = choice.finish_reason;
      this.closeAll(out);
    }
    return out;
  }

  /** After [DONE] or the backend's clean close: closes what is open and sends the terminal event with the final response. */
  end(): ResponsesEvent[] {
    if (this.state === 'closed') return [];
    const out = this.start();
    this.closeAll(out);
    // An answer without any output is an empty message, as in the JSON answer.
    if (this.output.length === 0) {
      this.message = this.openMessage(out);
      this.closeAll(out);
    }
    const outcome = outcomeOf(this.finish);
    this.response = responseObject(this.meta, outcome.status, { output: this.output, usage: this.usage, incomplete_details: outcome.incomplete_details });
    this.emit(out, outcome.status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.response });
    this.state = 'closed';
    return out;
  }

  /** The output as it stands: the items closed so far, and the open ones as they are, incomplete (a cancelled turn's answer). */
  outputSoFar(): OutputItem[] {
    const output = [...this.output];
    for (const open of this.openItems()) output[open.index] = this.snapshot(open, 'incomplete');
    return output;
  }

  /** After a failure mid-stream: an error event, then response.failed with what was produced so far (open items incomplete). */
  fail(error: { type: string; code: string; message: string }): ResponsesEvent[] {
    if (this.state === 'closed') return [];
    const out = this.start();
    for (const open of this.openItems()) this.output[open.index] = this.snapshot(open, 'incomplete');
    this.forgetOpen();
    this.emit(out, 'error', { code: error.code, message: error.message, param: null });
    this.response = responseObject(this.meta, 'failed', { output: this.output, usage: this.usage, error: { code: error.code, message: error.message } });
    this.emit(out, 'response.failed', { response: this.response });
    this.state = 'closed';
    return out;
  }

  private reasoningDelta(delta: string, out: ResponsesEvent[]): void {
    if (!this.reasoning) {
      if (this.message) this.close(this.message, 'completed', out);
      this.message = undefined;
      this.reasoning = this.open(out, 'reasoning', reasoningItem(this.makeId('rs'), ''));
      this.emit(out, 'response.reasoning_summary_part.added', { ...this.at(this.reasoning), summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    this.reasoning.text += delta;
    this.emit(out, 'response.reasoning_summary_text.delta', { ...this.at(this.reasoning), summary_index: 0, delta });
  }

  private textDelta(delta: string, out: ResponsesEvent[]): void {
    if (!this.message) {
      if (this.reasoning) this.close(this.reasoning, 'completed', out);
      this.reasoning = undefined;
      this.message = this.openMessage(out);
    }
    this.message.text += delta;
    this.emit(out, 'response.output_text.delta', { ...this.at(this.message), content_index: 0, delta, logprobs: [] });
  }

  private callDelta(call: Json, out: ResponsesEvent[]): void {
    const index = typeof call.index === 'number' ? call.index : 0;
    const fn = isObject(call.function) ? call.function : {};
    const name = typeof fn.name === 'string' ? fn.name : '';
    let open = this.calls.get(index);
    if (!open) {
      for (const text of [this.reasoning, this.message]) if (text) this.close(text, 'completed', out);
      this.reasoning = this.message = undefined;
      open = this.openCall(typeof call.id === 'string' && call.id !== '' ? call.id : this.makeId('call'), this.names.get(name) ?? { name }, out);
      this.calls.set(index, open);
    } else if (open.fn!.name === '' && name !== '') {
      // A name after the first delta names the item, which stays of the kind it was announced as.
      open.fn = this.names.get(name) ?? { name };
    }
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      if (open.reader) this.inputDelta(open, open.reader.push(fn.arguments), out);
      else {
        open.text += fn.arguments;
        this.emit(out, 'response.function_call_arguments.delta', { ...this.at(open), delta: fn.arguments });
      }
    }
  }

  private openCall(callId: string, fn: ToolName, out: ResponsesEvent[]): OpenItem {
    if (!fn.custom) return this.open(out, 'function_call', functionCallItem(this.makeId('fc'), callId, fn, '', 'in_progress'), { callId, fn });
    const item = customCallItem(this.makeId('ctc'), callId, fn, '', 'in_progress');
    return this.open(out, 'custom_tool_call', item, { callId, fn, reader: new CustomInputReader() });
  }

  private inputDelta(open: OpenItem, delta: string, out: ResponsesEvent[]): void {
    if (delta === '') return;
    open.text += delta;
    this.emit(out, 'response.custom_tool_call_input.delta', { ...this.at(open), delta });
  }

  private openMessage(out: ResponsesEvent[]): OpenItem {
    // An in-progress message has no parts yet: its one part arrives with an event of its own.
    const open = this.open(out, 'message', { id: this.makeId('msg'), type: 'message', status: 'in_progress', content: [], role: 'assistant' });
    this.emit(out, 'response.content_part.added', { ...this.at(open), content_index: 0, part: outputText('') });
    return open;
  }

  private open(out: ResponsesEvent[], kind: OpenItem['kind'], item: OutputItem, extra: Partial<OpenItem> = {}): OpenItem {
    const open: OpenItem = { kind, index: this.output.length, id: item.id, text: '', ...extra };
    this.output.push(item);
    this.emit(out, 'response.output_item.added', { output_index: open.index, item });
    return open;
  }

  private close(open: OpenItem, status: ItemStatus, out: ResponsesEvent[]): void {
    const at = this.at(open);
    if (open.kind === 'reasoning') {
      this.emit(out, 'response.reasoning_summary_text.done', { ...at, summary_index: 0, text: open.text });
      this.emit(out, 'response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: open.text } });
    } else if (open.kind === 'message') {
      this.emit(out, 'response.output_text.done', { ...at, content_index: 0, text: open.text, logprobs: [] });
      this.emit(out, 'response.content_part.done', { ...at, content_index: 0, part: outputText(open.text) });
    } else if (open.kind === 'custom_tool_call') {
      this.inputDelta(open, open.reader!.end(), out);
      this.emit(out, 'response.custom_tool_call_input.done', { ...at, input: open.text });
    } else {
      this.emit(out, 'response.function_call_arguments.done', { ...at, name: open.fn!.name, arguments: open.text });
    }
    const item = this.snapshot(open, status);
    this.output[open.index] = item;
    this.emit(out, 'response.output_item.done', { output_index: open.index, item });
  }

  private closeAll(out: ResponsesEvent[]): void {
    const status = itemStatusOf(outcomeOf(this.finish));
    for (const open of this.openItems()) this.close(open, status, out);
    this.forgetOpen();
  }

  /** The open items in output order. */
  private openItems(): OpenItem[] {
    const open = [...this.calls.values()];
    if (this.reasoning) open.push(this.reasoning);
    if (this.message) open.push(this.message);
    return open.sort((a, b) => a.index - b.index);
  }

  private forgetOpen(): void {
    this.reasoning = this.message = undefined;
    this.calls.clear();
  }

  private snapshot(open: OpenItem, status: ItemStatus): OutputItem {
    if (open.kind === 'reasoning') return reasoningItem(open.id, open.text);
    if (open.kind === 'message') return messageItem(open.id, open.text, status);
    if (open.kind === 'custom_tool_call') return customCallItem(open.id, open.callId!, open.fn!, open.text, status);
    return functionCallItem(open.id, open.callId!, open.fn!, open.text, status);
  }

  private at(open: OpenItem): { item_id: string; output_index: number } {
    return { item_id: open.id, output_index: open.index };
  }

  private emit(out: ResponsesEvent[], type: string, fields: Record<string, unknown>): void {
    out.push({ type, sequence_number: this.seq++, ...fields });
  }
}
