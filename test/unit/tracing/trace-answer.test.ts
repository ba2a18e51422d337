// What a traced request's answer said, read from what the client got in each
// protocol, JSON or streamed: id, model, finish reasons, and the text only
// when it is captured; and the captured messages in the GenAI form.
import { AnswerFacts, MAX_CAPTURED_CHARS } from '../../../src/tracing/answer';
import { inputMessages, outputMessages } from '../../../src/tracing/content';

describe('AnswerFacts', () => {
  it('chat JSON: id, model, each choice\'s finish reason, the text when captured', () => {
    const a = new AnswerFacts('chat', true);
    a.json(JSON.stringify({ id: 'c1', model: 'm', choices: [{ message: { content: 'hi' }, finish_reason: 'stop' }, { message: { content: ' there' }, finish_reason: 'length' }] }));
    expect(a).toMatchObject({ id: 'c1', model: 'm', finishReasons: ['stop', 'length'], text: 'hi there' });
  });

  it('chat stream: the first chunk names it, a finish reason is read where one is set, text only when captured', () => {
    const chunks = [
      { id: 's1', model: 'm', choices: [{ delta: { role: 'assistant', content: 'a' }, finish_reason: null }] },
      { id: 's1', model: 'm', choices: [{ delta: { content: 'b' }, finish_reason: null }] },
      { id: 's1', model: 'm', choices: [{ delta: {}, finish_reason: 'stop' }] },
    ].map((c) => JSON.stringify(c));
    const plain = new AnswerFacts('chat', false);
    const captured = new AnswerFacts('chat', true);
    for (const c of chunks) { plain.event(c, undefined); captured.event(c, undefined); }
    expect(plain).toMatchObject({ id: 's1', model: 'm', finishReasons: ['stop'], text: undefined });
    expect(captured.text).toBe('ab');
  });

  it('responses stream: created names it, completed or incomplete ends it', () => {
    const a = new AnswerFacts('responses', true);
    a.event(JSON.stringify({ type: 'response.created', response: { id: 'resp_1', model: 'm', status: 'in_progress' } }), 'response.created');
    a.event(JSON.stringify({ type: 'response.output_text.delta', delta: 'hey' }), 'response.output_text.delta');
    a.event(JSON.stringify({ type: 'response.incomplete', response: { id: 'resp_1', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } }), 'response.incomplete');
    expect(a).toMatchObject({ id: 'resp_1', model: 'm', finishReasons: ['max_output_tokens'], text: 'hey' });
  });

  it('messages JSON and stream: stop_reason, text blocks', () => {
    const json = new AnswerFacts('messages', true);
    json.json(JSON.stringify({ id: 'msg_1', model: 'm', stop_reason: 'end_turn', content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 't', name: 'f', input: {} }] }));
    expect(json).toMatchObject({ id: 'msg_1', model: 'm', finishReasons: ['end_turn'], text: 'ok' });
    const stream = new AnswerFacts('messages', false);
    stream.event(JSON.stringify({ type: 'message_start', message: { id: 'msg_2', model: 'm' } }), 'message_start');
    stream.event(JSON.stringify({ type: 'content_block_delta', delta: { type: 'text_delta', text: 'x' } }), 'content_block_delta');
    stream.event(JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'max_tokens' } }), 'message_delta');
    expect(stream).toMatchObject({ id: 'msg_2', finishReasons: ['max_tokens'], text: undefined });
  });

  it('ignores what is not JSON, and bounds the captured text', () => {
    const a = new AnswerFacts('chat', true);
    a.json('not json');
    a.event('[DONE]', undefined);
    expect(a.id).toBeUndefined();
    a.event(JSON.stringify({ choices: [{ delta: { content: 'x'.repeat(MAX_CAPTURED_CHARS + 10) } }] }), undefined);
    expect(a.text).toHaveLength(MAX_CAPTURED_CHARS);
  });
});

describe('captured messages', () => {
  it('the conversation in the GenAI form: text parts, tool calls and their results', () => {
    const chat = {
      model: 'm', stream: false, model_params: {}, texts: [],
      messages: [
        { role: 'system' as const, content: 'be brief' },
        { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool' as const, tool_call_id: 'c1', content: 'result' },
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'look' }, { type: 'image_url' as const, image_url: { url: 'https://x/y.png' } }] },
      ],
    };
    expect(JSON.parse(inputMessages(chat, undefined)!)).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: '{"a":1}' }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'result' }] },
      { role: 'user', parts: [{ type: 'text', content: 'look' }] },
    ]);
    expect(JSON.parse(inputMessages(undefined, { model: 'i', prompt: 'a fox', model_params: {}, texts: [] })!)).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'a fox' }] }]);
    expect(JSON.parse(outputMessages('done', ['stop']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'done' }], finish_reason: 'stop' }]);
  });

  it('bounds the texts together and stays valid JSON', () => {
    const long = 'y'.repeat(MAX_CAPTURED_CHARS);
    const chat = { model: 'm', stream: false, model_params: {}, texts: [], messages: [{ role: 'user' as const, content: long }, { role: 'user' as const, content: 'more' }] };
    const parsed = JSON.parse(inputMessages(chat, undefined)!);
    expect(parsed[0].parts[0].content).toHaveLength(MAX_CAPTURED_CHARS);
    expect(parsed[1].parts[0].content).toBe('');
  });
});
