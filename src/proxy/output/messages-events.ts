// Output rules on a Messages backend's own stream: each content block's
// text_delta or input_json_delta pieces are a part (by the block's index);
// content_block_stop is preceded by a delta carrying what the block still
// held. Messages repeats no text whole, so a mask needs nothing more. A cut
// stops the open block and ends with message_delta (stop_reason refusal,
// the usage) and message_stop.
import type { ProtocolUsage } from '../../protocols/usage';
import type { Loose, NativeOutput } from './native-events';
import type { OutputText } from './text';

/** The delta field each kind of delta carries its text in. */
const TEXT_OF: Readonly<Record<string, string>> = { text_delta: 'text', input_json_delta: 'partial_json' };
const DELTA_OF: Readonly<Record<string, string>> = { text: 'text_delta', tool_use: 'input_json_delta' };

export class MessagesOutput implements NativeOutput {
  /** Open blocks by index, with the kind of delta they stream. */
  private readonly open = new Map<number, string | undefined>();

  constructor(private readonly text: OutputText) {}

  get blocked(): boolean {
    return this.text.blocked !== undefined;
  }

  filter(event: Loose): Loose[] | undefined {
    if (event.type === 'content_block_start') {
      this.open.set(event.index, DELTA_OF[event.content_block?.type]);
      return undefined;
    }
    if (event.type === 'content_block_stop') {
      const kind = this.open.get(event.index);
      this.open.delete(event.index);
      const tail = this.text.end(String(event.index));
      return tail === '' || kind === undefined ? undefined : [{ type: 'content_block_delta', index: event.index, delta: { type: kind, [TEXT_OF[kind]]: tail } }, event];
    }
    if (event.type === 'message_delta' || event.type === 'message_stop') {
      // Blocks the backend never stopped: what they hold goes out before the message ends.
      const tails = this.text.holding('').flatMap((part) => {
        const kind = this.open.get(Number(part));
        const tail = this.text.end(part);
        return kind === undefined || tail === '' ? [] : [{ type: 'content_block_delta', index: Number(part), delta: { type: kind, [TEXT_OF[kind]]: tail } }];
      });
      return tails.length > 0 ? [...tails, event] : undefined;
    }
    const field = event.type === 'content_block_delta' ? TEXT_OF[event.delta?.type] : undefined;
    if (field === undefined || typeof event.delta[field] !== 'string') return undefined;
    const text = this.text.push(String(event.index), event.delta[field]);
    if (text === event.delta[field]) return undefined;
    if (text === '') return [];
    event.delta[field] = text;
    return [event];
  }

  usageAfterCut(event: Loose, before: ProtocolUsage | undefined): ProtocolUsage | undefined {
    const output = event.type === 'message_delta' ? event.usage?.output_tokens : undefined;
    return Number.isSafeInteger(output) && before !== undefined ? { ...before, output_tokens: output } : undefined;
  }

  cut(usage: ProtocolUsage): Loose[] {
    const events: Loose[] = [...this.open.keys()].map((index) => ({ type: 'content_block_stop', index }));
    this.open.clear();
    events.push({ type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    events.push({ type: 'message_stop' });
    return events;
  }
}
