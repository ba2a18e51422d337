import { fromChatJson } from '../../../../src/protocols/responses/from-chat';
import { historyItems, inputItems, inputItemsPage, parseInputItemsQuery, type StoredItem } from '../../../../src/protocols/responses/items';
import { parseResponsesRequest } from '../../../../src/protocols/responses/request';
import { toChat } from '../../../../src/protocols/responses/to-chat';
import { rejection } from '../../../support/rejection';
import { completion, countingIds, metaFor } from '../../../support/responses-fixtures';

const request = (input: unknown, extra: object = {}) => parseResponsesRequest({ model: 'm', input, ...extra });

describe('inputItems', () => {
  it('makes a string input one user message with an id', () => {
    expect(inputItems(request('Hi there'), countingIds())).toEqual([
      { id: 'msg_1', type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'Hi there' }] },
    ]);
  });

  it('gives every item a kind and an id, keeping the ids it has', () => {
    const req = request([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { type: 'function_call', id: 'fc_client', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'r' },
      { type: 'web_search_call', status: 'completed' },
    ]);
    expect(inputItems(req, countingIds())).toEqual([
      { id: 'msg_1', type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_text', text: 'a' }] },
      { id: 'msg_2', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'b', annotations: [] }] },
      { id: 'fc_client', type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { id: 'fco_1', type: 'function_call_output', call_id: 'c1', output: 'r' },
      { id: 'item_1', type: 'web_search_call', status: 'completed' },
    ]);
  });

  it('names an item whose type is an Object member like any other unknown item', () => {
    expect(inputItems(request([{ type: 'constructor' }, { type: 'toString' }]), countingIds())).toEqual([
      { id: 'item_1', type: 'constructor' }, { id: 'item_2', type: 'toString' },
    ]);
  });

  it('is empty for a request that only continues an earlier one', () => {
    expect(inputItems(parseResponsesRequest({ model: 'm', previous_response_id: 'resp_1' }))).toEqual([]);
  });
});

describe('historyItems with previous_response_id', () => {
  it('carries a conversation over three turns: earlier history, then each turn\'s input and output', () => {
    const turn1 = request('What is 2+2?', { instructions: 'Be brief.' });
    const answer1 = fromChatJson(completion({ content: '4' }, 'stop'), metaFor(turn1)).body;
    const history1 = historyItems(turn1, answer1);

    const turn2 = request('And times 3?', { previous_response_id: answer1.id });
    const answer2 = fromChatJson(completion({ content: '12' }, 'stop'), metaFor(turn2)).body;
    const history2 = historyItems(turn2, answer2, history1);

    const turn3 = request('Thanks.', { previous_response_id: answer2.id });
    expect(toChat(turn3, { history: history2 }).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }] },
      { role: 'assistant', content: '4' },
      { role: 'user', content: [{ type: 'text', text: 'And times 3?' }] },
      { role: 'assistant', content: '12' },
      { role: 'user', content: 'Thanks.' },
    ]);
    expect(history2.map((i) => i.type)).toEqual(['message', 'message', 'message', 'message']);
  });

  it('keeps tool calls and their results in order', () => {
    const turn = request([{ role: 'user', content: 'ls' }]);
    const answer = fromChatJson(completion({ tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{}' } }] }, 'tool_calls'), metaFor(turn)).body;
    const next = request([{ type: 'function_call_output', call_id: 'call_1', output: 'a.txt' }], { previous_response_id: answer.id });
    expect(toChat(next, { history: historyItems(turn, answer) }).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'ls' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
    ]);
  });
});

describe('input items list', () => {
  const items = ['a', 'b', 'c', 'd', 'e'].map((id): StoredItem => ({ id: `msg_${id}`, type: 'message', role: 'user', content: id }));
  const ids = (page: { data: StoredItem[] }) => page.data.map((i) => i.id);

  it.each<[string, unknown, string[], boolean]>([
    ['by default, newest first, 20 at most', {}, ['msg_e', 'msg_d', 'msg_c', 'msg_b', 'msg_a'], false],
    ['oldest first', { order: 'asc' }, ['msg_a', 'msg_b', 'msg_c', 'msg_d', 'msg_e'], false],
    ['a page of two', { limit: '2' }, ['msg_e', 'msg_d'], true],
    ['the page after an item', { order: 'asc', after: 'msg_b', limit: 2 }, ['msg_c', 'msg_d'], true],
    ['the last page', { order: 'asc', after: 'msg_c', limit: 2 }, ['msg_d', 'msg_e'], false],
    ['past the end', { after: 'msg_a' }, [], false],
  ])('lists %s', (_what, query, expected, hasMore) => {
    const page = inputItemsPage(items, parseInputItemsQuery(query));
    expect(page).toEqual({ object: 'list', data: expect.any(Array), first_id: expected[0] ?? null, last_id: expected.at(-1) ?? null, has_more: hasMore });
    expect(ids(page)).toEqual(expected);
  });

  it.each([
    ['a limit of 0', { limit: '0' }, 'limit'],
    ['a limit over 100', { limit: 101 }, 'limit'],
    ['a limit that is no number', { limit: 'ten' }, 'limit'],
    ['an order that does not exist', { order: 'up' }, 'order'],
  ])('refuses %s', (_what, query, param) => {
    expect(rejection(parseInputItemsQuery, query).param).toBe(param);
  });

  it('refuses an `after` that is not one of the items', () => {
    expect(rejection((after: string) => inputItemsPage(items, { after, limit: 20, order: 'desc' }), 'msg_zzz').param).toBe('after');
  });
});
