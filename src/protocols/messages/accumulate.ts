// Builds the message a Messages stream describes, event by event, as a
// client's SDK does: for storage after a stream, native or translated. Reads
// events defensively (a native backend's are not checked) and never throws.
import { toolInput } from './answer';
import type { Message } from './types';

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => v !== null && typeof v === 'object' && !Array.isArray(v);

export class MessageAccumulator {
  private message: Message | undefined;
  /** A tool_use block's input as it arrives (input_json_delta pieces), by block index. */
  private readonly json = new Map<number, string>();
  private stopped = false;

  /** The message once `message_stop` arrived; undefined before, or after a stream without `message_start`. */
  get final(): Message | undefined {
    return this.stopped ? this.message : undefined;
  }

  /** The message so far (usage and content up to the last event). */
  get snapshot(): Message | undefined {
    return this.message;
  }

  add(event: Loose): void {
    if (event.type === 'message_start' && isObject(event.message)) {
      const m = event.message as unknown as Message;
      this.message = { ...m, content: Array.isArray(m.content) ? [...m.content] : [], usage: { ...m.usage } };
      return;
    }
    const message = this.message;
    if (message === undefined) return;
    if (event.type === 'message_stop') this.stopped = true;
    else if (event.type === 'message_delta') this.addMessageDelta(message, event);
    // Blocks come in order; an index out of it (or absurdly far) is a backend's error, not a reason to grow an array.
    else if (event.type === 'content_block_start' && event.index === message.content.length && isObject(event.content_block)) {
      message.content.push({ ...event.content_block } as unknown as Message['content'][number]);
    } else if (event.type === 'content_block_delta' && typeof event.index === 'number' && isObject(event.delta)) {
      this.addBlockDelta(message, event.index, event.delta);
    } else if (event.type === 'content_block_stop' && typeof event.index === 'number') {
      const block = message.content[event.index] as unknown as Loose | undefined;
      const json = this.json.get(event.index);
      if (block !== undefined && json !== undefined) block.input = toolInput(json);
      this.json.delete(event.index);
    }
  }

  private addMessageDelta(message: Message, event: Loose): void {
    const delta = isObject(event.delta) ? event.delta : {};
    if ('stop_reason' in delta) message.stop_reason = delta.stop_reason as Message['stop_reason'];
    if ('stop_sequence' in delta) message.stop_sequence = delta.stop_sequence as string | null;
    // Counts in message_delta are totals for the whole message: a present one replaces, never adds.
    if (isObject(event.usage)) {
      for (const [key, value] of Object.entries(event.usage)) if (value !== null && key !== '__proto__') (message.usage as unknown as Loose)[key] = value;
    }
  }

  private addBlockDelta(message: Message, index: number, delta: Loose): void {
    const block = message.content[index] as unknown as Loose | undefined;
    if (block === undefined) return;
    if (delta.type === 'text_delta' && typeof delta.text === 'string') block.text = `${block.text ?? ''}${delta.text}`;
    else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') block.thinking = `${block.thinking ?? ''}${delta.thinking}`;
    else if (delta.type === 'signature_delta') block.signature = delta.signature;
    else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') this.json.set(index, (this.json.get(index) ?? '') + delta.partial_json);
    else if (delta.type === 'citations_delta') block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
  }
}
