// Output rules on a native backend's own events: held text goes out before
// the event that ends its part, even when the backend skips the part's own
// end; sequence numbers stay whole; a cut ends in the protocol's own way.
import { ResponsesOutput } from '../../../src/output-rules/responses-events';
import { MessagesOutput } from '../../../src/output-rules/messages-events';
import { OutputText } from '../../../src/output-rules/text';
import { outputRules } from '../../../plugins/content-filter/output';

const text = (action: 'block' | 'mask') => new OutputText({ rules: [{ plugin: 'cf', rules: outputRules({ terms: ['project bluebird'], patterns: [], action, mask: '[x]' })! }] }, {});

/** Runs events through the filter: what the client gets. */
function relay(out: { filter(e: Record<string, any>): Record<string, any>[] | undefined }, events: Record<string, any>[]): Record<string, any>[] {
  return events.flatMap((e) => out.filter(structuredClone(e)) ?? [e]);
}

const delta = (d: string, n: number) => ({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: d, sequence_number: n });

describe('ResponsesOutput', () => {
  const opening = [
    { type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] }, sequence_number: 0 },
    { type: 'response.output_item.added', output_index: 0, item: { type: 'message', id: 'msg_1', content: [] }, sequence_number: 1 },
    { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' }, sequence_number: 2 },
  ];

  it('sends what a part held before the terminal event when the backend skipped the part\'s .done events, numbered without a gap', () => {
    const sent = relay(new ResponsesOutput(text('block')), [...opening, delta('see the pro', 3), { type: 'response.completed', response: { status: 'completed', output: [] }, sequence_number: 4 }]);
    expect(sent.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)).toEqual(['see the ', 'pro']);
    expect(sent.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('cuts with the open item incomplete and response.incomplete, reason content_filter, with the usage', () => {
    const out = new ResponsesOutput(text('block'));
    const sent = relay(out, [...opening, delta('see Project Blue', 3), delta('bird fly', 4)]);
    expect(out.blocked).toBe(true);
    const cut = out.cut({ input_tokens: 7, output_tokens: 9 });
    expect(cut.map((e) => e.type)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
    expect(cut.at(-1)).toMatchObject({ response: { id: 'resp_1', status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [{ status: 'incomplete', content: [{ text: 'see ' }] }], usage: { input_tokens: 7, output_tokens: 9, total_tokens: 16 } } });
    expect([...sent, ...cut].map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('MessagesOutput', () => {
  it('sends what a block held before message_delta when the backend never stopped the block', () => {
    const sent = relay(new MessagesOutput(text('mask')), [
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'it is Project' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
    ]);
    expect(sent.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text)).toEqual(['it is ', 'Project']);
    expect(sent.at(-1)!.type).toBe('message_delta');
  });

  it('cuts with the open block stopped, stop_reason refusal and message_stop', () => {
    const out = new MessagesOutput(text('block'));
    relay(out, [{ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a Project Bluebird!' } }]);
    expect(out.cut({ input_tokens: 7, output_tokens: 5 })).toEqual([
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ]);
  });
});
