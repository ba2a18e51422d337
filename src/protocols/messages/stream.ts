// A chat-completions stream as a Messages stream, one chunk at a time:
// message_start with the first chunk, content blocks as their pieces arrive
// (see blocks.ts for their order), then message_delta (stop_reason, usage) and
// message_stop when the backend's stream ends, since chat sends its usage last.
//
//   const s = new MessagesStream({ id: 'msg_…', model: req.model, inputTokens });
//   for each parsed chat chunk: send(s.push(chunk));  while the backend is silent: send(s.ping());
//   after [DONE]: send(s.end());   on a failure after the start: send(s.fail(err));
//   then s.usage (what the backend reported) and s.message (the whole message) for storage.
import { estimateTokens } from '../../request/usage';
import type { ProtocolUsage } from '../usage';
import { MessageAccumulator } from './accumulate';
import { reasoningOf, stopReasonOf, stopSequenceOf, usageOf, type AnswerUsage } from './answer';
import { BlockSequencer, type ToolCallState } from './blocks';
import { streamErrorEvent, type StreamFailure } from './errors';
import { textOf, toolUseId, type AnswerMeta } from './from-chat';
import type { Message, MessagesEvent } from './types';

type Loose = Record<string, unknown>;

export class MessagesStream {
  private readonly blocks = new BlockSequencer();
  private readonly calls = new Map<number, ToolCallState>();
  private readonly accumulator = new MessageAccumulator();
  private started = false;
  private over = false;
  private finishReason: unknown;
  private stopSequence: string | null = null;
  private read: AnswerUsage | undefined;
  /** Characters of output, for an estimate when the backend reports no usage. */
  private outputChars = 0;

  constructor(private readonly meta: AnswerMeta) {}

  /** What the backend reported, once its usage chunk arrived. */
  get usage(): ProtocolUsage | undefined {
    return this.read?.usage;
  }

  /** The whole message, as the JSON answer would be, once the stream ended well. */
  get message(): Message | undefined {
    return this.accumulator.final;
  }

  /** message_start, once: push, ping and end send it first when it has not gone out yet. */
  start(): MessagesEvent[] {
    if (this.started) return [];
    this.started = true;
    const usage = { input_tokens: this.meta.inputTokens ?? 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const message: Message = { id: this.meta.id, type: 'message', role: 'assistant', model: this.meta.model, content: [], stop_reason: null, stop_sequence: null, usage };
    return this.record([{ type: 'message_start', message }]);
  }

  /** The keep-alive event, for the caller to send while the backend is silent. */
  ping(): MessagesEvent[] {
    return this.over ? [] : [...this.start(), { type: 'ping' }];
  }

  push(chunk: object): MessagesEvent[] {
    const out = this.start();
    if (this.over) return out;
    const c = chunk as Loose;
    if (c.usage != null) this.read = usageOf(c.usage) ?? this.read;
    const choice: unknown = Array.isArray(c.choices) ? c.choices[0] : undefined;
    if (choice === null || typeof choice !== 'object') return out;
    const events: MessagesEvent[] = [];
    const { delta, finish_reason: finish } = choice as Loose;
    if (delta !== null && typeof delta === 'object') this.pushDelta(delta as Loose, events);
    if (finish != null) {
      this.finishReason = finish;
      this.stopSequence = stopSequenceOf(choice as Loose);
      // Every block can stop now; message_delta waits for the usage, which chat sends last.
      this.blocks.finish(events);
    }
    return [...out, ...this.record(events)];
  }

  private pushDelta(delta: Loose, out: MessagesEvent[]): void {
    const reasoning = reasoningOf(delta);
    if (reasoning !== undefined) this.text('thinking', reasoning, out);
    const text = textOf(delta.content) + (typeof delta.refusal === 'string' ? delta.refusal : '');
    if (text !== '') this.text('text', text, out);
    if (!Array.isArray(delta.tool_calls)) return;
    delta.tool_calls.forEach((raw: unknown, position: number) => {
      if (raw === null || typeof raw !== 'object') return;
      const tc = raw as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
      const key = typeof tc.index === 'number' ? tc.index : position;
      let call = this.calls.get(key);
      if (call === undefined) {
        const id = typeof tc.id === 'string' && tc.id !== '' ? tc.id : toolUseId(this.meta, this.calls.size);
        call = { id, name: typeof tc.function?.name === 'string' ? tc.function.name : '', args: '', closed: false };
        this.calls.set(key, call);
      }
      const args = typeof tc.function?.arguments === 'string' ? tc.function.arguments : '';
      call.args += args;
      this.outputChars += args.length;
      this.blocks.push({ kind: 'tool', call, args }, out);
    });
  }

  private text(kind: 'text' | 'thinking', text: string, out: MessagesEvent[]): void {
    this.outputChars += text.length;
    this.blocks.push({ kind, text }, out);
  }

  /** After [DONE] or a complete close: the last blocks stop, then message_delta and message_stop. */
  end(): MessagesEvent[] {
    const out = this.start();
    if (this.over) return out;
    this.over = true;
    const events: MessagesEvent[] = [];
    this.blocks.finish(events);
    const read = this.read?.body;
    events.push({
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(this.finishReason, this.stopSequence, this.calls.size > 0), stop_sequence: this.stopSequence },
      usage: read ?? { output_tokens: estimateTokens(this.outputChars) },
    });
    events.push({ type: 'message_stop' });
    return [...out, ...this.record(events)];
  }

  /** A failure after the stream started: Messages' error event, and nothing after it. */
  fail(error: StreamFailure, requestId?: string): MessagesEvent[] {
    if (this.over) return [];
    this.over = true;
    return [streamErrorEvent(error, requestId)];
  }

  private record(events: MessagesEvent[]): MessagesEvent[] {
    for (const event of events) this.accumulator.add(event as unknown as Loose);
    return events;
  }
}
