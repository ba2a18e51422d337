// Stored responses with several workers and no Redis: the primary keeps
// them (primary-responses.ts), each worker reaches them over its IPC channel
// (cluster-responses.ts, here on in-memory ports that copy and deliver
// asynchronously, as node:cluster's do). A response stored through one worker
// is found through another, only by its owner, and a cancel sent through one
// reaches the request running it on another.
import pino from 'pino';
import { IpcPeer, type IpcHandler } from '../../../src/cluster/ipc';
import { parseConfigText } from '../../../src/config/load';
import type { PrimaryLink, WorkerLink } from '../../../src/contract/plugin';
import { serveResponses } from '../../../src/responses-store/primary-responses';
import { ResponseState } from '../../../src/responses-store/state';
import { cancelResponse, deleteResponse, getResponse } from '../../../src/responses-store/endpoints';
import { continueFrom } from '../../../src/responses-store/resolve';
import { portPair, type TestPort } from '../../support/ipc-ports';
import { storedRecord } from '../../support/responses-state';

const A = 'org:a';
const B = 'org:b';

function machine(workers: number, configText = '{}') {
  const config = parseConfigText(configText, '(inline)', {});
  const handlers = new Map<string, IpcHandler>();
  const exits: Array<(worker: number) => void> = [];
  const primaryLink: PrimaryLink = { handle: (channel, h) => void handlers.set(channel, h), onWorkerExit: (l) => void exits.push(l) };
  const primary = serveResponses(primaryLink);
  primary.apply(config.responses);
  const lines: Array<{ level: number; msg: string; requestId?: string }> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const ports: TestPort[] = [];
  const states = Array.from({ length: workers }, (_, i) => {
    const [primaryEnd, workerEnd] = portPair(i + 1);
    ports.push(workerEnd);
    new IpcPeer(primaryEnd, handlers);
    const peer = new IpcPeer(workerEnd, new Map());
    const link: WorkerLink = { worker: i + 1, request: (channel, body, timeoutMs) => peer.request(channel, body, timeoutMs) };
    const state = new ResponseState({ services: { cluster: link }, logger });
    state.apply(config);
    return state;
  });
  return { primary, states, ports, lines, exit: (worker: number) => exits.forEach((l) => l(worker)) };
}

describe('stored responses across workers (the primary keeps them)', () => {
  let m: ReturnType<typeof machine>;
  afterEach(async () => {
    await Promise.all(m.states.map((s) => s.close()));
    await m.primary.close();
  });

  it('finds a response stored through one worker through another, for its owner only', async () => {
    m = machine(2);
    const [one, two] = m.states;
    const record = storedRecord('resp_1', A, 'hello');
    expect(await one.save('resp_1', record, 'req-1')).toBe(true);
    expect(await getResponse(two.store, A, 'resp_1')).toEqual(record.response);
    expect(await continueFrom(two.store, A, 'resp_1')).toEqual(record.history);
    await expect(getResponse(two.store, B, 'resp_1')).rejects.toMatchObject({ reason: 'not_found' });
    await expect(deleteResponse(two.store, B, 'resp_1')).rejects.toMatchObject({ reason: 'not_found' });
    await expect(deleteResponse(two.store, A, 'resp_1')).resolves.toMatchObject({ deleted: true });
    expect(await one.store.get('resp_1', A)).toBeUndefined();
  });

  it('cancels through one worker a response running on another', async () => {
    m = machine(3);
    const [runner, , canceller] = m.states;
    await runner.save('resp_1', storedRecord('resp_1', A, 'long', 'in_progress'), 'req-1');
    const cancel = jest.fn(() => void runner.save('resp_1', storedRecord('resp_1', A, 'long', 'cancelled'), 'req-1').then(() => runner.running.remove('resp_1')));
    runner.running.add('resp_1', { cancel });
    const answer = await cancelResponse(canceller, A, 'resp_1');
    expect(answer.status).toBe('cancelled');
    expect(answer.output).toHaveLength(1); // the runner's own end, not one made up by the canceller
    expect(cancel).toHaveBeenCalledTimes(1);
  });

  it('keeps no response over the cap, and drops what its id held', async () => {
    m = machine(1, 'responses: { maxResponseBytes: 2kb }');
    const [one] = m.states;
    await one.save('resp_1', storedRecord('resp_1', A, 'short', 'in_progress'), 'req-1');
    expect(await one.save('resp_1', storedRecord('resp_1', A, 'x'.repeat(4000)), 'req-1')).toBe(false);
    expect(await one.store.get('resp_1', A)).toBeUndefined();
    expect(m.lines.filter((l) => l.msg === 'responses: a response over responses.maxResponseBytes was not stored')).toEqual([expect.objectContaining({ requestId: 'req-1' })]);
  });

  it('never fails a request when the primary cannot answer: one warning per outage, 503 on reads', async () => {
    m = machine(1);
    const [one] = m.states;
    m.ports[0].up = false;
    expect(await one.save('resp_1', storedRecord('resp_1', A, 'a'), 'req-1')).toBe(false);
    expect(await one.save('resp_2', storedRecord('resp_2', A, 'b'), 'req-2')).toBe(false);
    await expect(getResponse(one.store, A, 'resp_1')).rejects.toMatchObject({ reason: 'store_unavailable', status: 503 });
    m.ports[0].up = true;
    expect(await one.save('resp_3', storedRecord('resp_3', A, 'c'), 'req-3')).toBe(true);
    const said = m.lines.filter((l) => l.msg.startsWith('responses: the store')).map((l) => [l.level, l.msg, l.requestId]);
    expect(said).toEqual([
      [40, 'responses: the store cannot answer; responses are not kept until it can', 'req-1'],
      [20, 'responses: the store cannot answer; responses are not kept until it can', 'req-2'],
      [30, 'responses: the store takes responses again', undefined],
    ]);
  });

  it('keeps nothing with responses.store false', async () => {
    m = machine(1, 'responses: { store: false }');
    const [one] = m.states;
    expect(one.keeps).toBe(false);
    expect(await one.save('resp_1', storedRecord('resp_1', A, 'a'), 'req-1')).toBe(false);
    await expect(getResponse(one.store, A, 'resp_1')).rejects.toMatchObject({ reason: 'not_found' });
  });
});

describe('PrimaryResponses cancels', () => {
  it('answers a worker\'s open poll at once, keeps a cancel for a worker between polls, and lets an exited worker go', async () => {
    const handlers = new Map<string, IpcHandler>();
    const primary = serveResponses({ handle: (c, h) => void handlers.set(c, h), onWorkerExit: () => undefined });
    primary.apply(parseConfigText('{}', '(inline)', {}).responses);
    const open = primary.poll(1);
    primary.poll(2); // known, then answered below by its exit
    primary.exited(2);
    primary.cancel('resp_x', 3);
    await expect(open).resolves.toEqual(['resp_x']);
    primary.cancel('resp_y', 3);
    expect(primary.poll(1)).toEqual(['resp_y']);
    primary.cancel('resp_z', 1); // the sender gets no copy
    const next = primary.poll(1);
    expect(next).toBeInstanceOf(Promise);
    await primary.close();
    await expect(next).resolves.toEqual([]);
  });
});
