// The Codex CLI's captured turns through the translation, against the agent
// backend's script (test/support/agent-script.ts): the chat backend of a
// translated route must be offered the same tools and take the same step as
// the Responses backend that Codex runs against natively, and its answer,
// translated back, must be what that native backend sends (ids aside),
// event for event: what Codex accepts.
import { fromChatJson } from '../../../../src/protocols/responses/from-chat';
import { parseResponsesRequest } from '../../../../src/protocols/responses/request';
import { ResponsesStream } from '../../../../src/protocols/responses/stream';
import { toChat } from '../../../../src/protocols/responses/to-chat';
import type { ResponseMeta } from '../../../../src/protocols/responses/types';
import { chatAnswer, chatView } from '../../../support/agent-chat';
import { responsesAnswer, responsesView } from '../../../support/agent-responses';
import { FINAL_PREFIX, nextStep, type AgentScript } from '../../../support/agent-script';
import { capturedCodexRequest, countingIds } from '../../../support/responses-fixtures';

const script: AgentScript = { command: 'echo sluice-token > marker.txt && cat marker.txt' };

/** The data of each SSE frame, parsed; [DONE] left out. */
const eventsOf = (frames: string[]): any[] => frames
  .map((frame) => frame.split('\n').find((line) => line.startsWith('data: '))!.slice('data: '.length))
  .filter((data) => data !== '[DONE]')
  .map((data) => JSON.parse(data));

function nativeTurn(body: any) {
  const step = nextStep(script, responsesView(body));
  const answer = responsesAnswer(body, step, 1);
  return { step, events: eventsOf(answer.frames), output: (answer.json as any).output };
}

function translatedTurn(body: any) {
  const request = parseResponsesRequest(structuredClone(body));
  const { messages, params } = toChat(request);
  const chatBody = { model: 'backend-model', messages, ...params, stream: true, stream_options: { include_usage: true } };
  const step = nextStep(script, chatView(chatBody));
  const answer = chatAnswer(chatBody, step, 1);
  const meta = (): ResponseMeta => ({ id: 'resp_1', createdAt: 1760000000, model: request.model, request, newId: countingIds() });
  const stream = new ResponsesStream(meta());
  const events = [...stream.start(), ...eventsOf(answer.frames).flatMap((chunk) => stream.push(chunk)), ...stream.end()];
  return { step, events, output: fromChatJson(answer.json, meta()).body.output };
}

/** What the two may differ in: ids, and the fields of a text part one side leaves out. */
const IGNORED = new Set(['id', 'item_id', 'sequence_number', 'logprobs', 'annotations']);
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !IGNORED.has(key)).map(([key, v]) => [key, strip(v)]));
}

/** Events to compare: a response's lifecycle by status and output, a run of deltas of one item as one (each side cuts text its own way). */
function comparable(events: any[]): any[] {
  const out: any[] = [];
  for (const event of events) {
    if (event.type.split('.').length === 2 && event.response) {
      out.push({ type: event.type, status: event.response.status, output: strip(event.response.output) });
      continue;
    }
    const last = out.at(-1);
    if (event.type.endsWith('.delta') && last?.type === event.type && last.output_index === event.output_index) last.delta += event.delta;
    else out.push(strip(event));
  }
  return out;
}

describe.each<[string, 'default' | 'named-model', 1 | 2]>([
  ['its default model, first turn (exec, a custom tool in an additional_tools item)', 'default', 1],
  ['its default model, second turn (the exec output back)', 'default', 2],
  ['a model it does not know, first turn (exec_command, a function)', 'named-model', 1],
  ['a model it does not know, second turn', 'named-model', 2],
])('the Codex CLI with %s', (_what, model, turn) => {
  const body = capturedCodexRequest(model, turn);
  const native = nativeTurn(body);
  const translated = translatedTurn(body);

  it('offers the chat backend the tools that make it take the native step', () => {
    expect(translated.step).toEqual(native.step);
    expect(native.step.kind).toBe(turn === 1 ? 'call' : 'answer');
  });

  it('streams back, event for event, what the native backend sends', () => {
    expect(comparable(translated.events)).toEqual(comparable(native.events));
  });

  it('answers in JSON with the native backend\'s output items', () => {
    expect(strip(translated.output)).toEqual(strip(native.output));
  });
});

describe('the Codex CLI default model\'s shell call', () => {
  it('is a custom_tool_call of exec, without a namespace, as the native backend answers; its output comes back quoted', () => {
    const call = translatedTurn(capturedCodexRequest('default', 1)).output.find((item: any) => item.type === 'custom_tool_call');
    expect(call).toEqual({
      id: 'ctc_1', type: 'custom_tool_call', status: 'completed', call_id: 'call_1', name: 'exec',
      input: `const r = await tools.exec_command({ cmd: ${JSON.stringify(script.command)} });\ntext(r.output);`,
    });
    const answer = translatedTurn(capturedCodexRequest('default', 2)).output[0];
    expect(answer.type === 'message' && answer.content[0].text).toBe(`${FINAL_PREFIX}\nScript completed\nWall time 0.1 seconds\nOutput:\nsluice-token`);
  });
});
