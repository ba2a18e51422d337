// How a worker's calls to the primary are gathered into messages
// (plugins/rate-limit/tick-batcher.ts), on a link whose answers the test
// releases by hand, so what is in flight when is exact.
import { LATER_MS, TickBatcher } from '../../../src/worker-link/tick-batcher';
import type { WorkerLink } from '../../../src';
import { until } from '../../support/wait';

interface Sent { calls: number[]; answer(values: string[]): void; fail(err: Error): void }

function manualLink(): WorkerLink & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    worker: 1,
    sent,
    request<T>(_channel: string, body: unknown): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        sent.push({ calls: body as number[], answer: (values) => resolve(values as T), fail: reject });
      });
    },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const echo = (calls: number[]) => calls.map((c) => `answer ${c}`);

describe('TickBatcher', () => {
  it('sends the calls made in one turn as one message and answers each in order', async () => {
    const link = manualLink();
    const batcher = new TickBatcher<number, string>(link, 'c', 1_000);
    const answers = Promise.all([batcher.send(1), batcher.send(2), batcher.send(3)]);
    expect(link.sent).toHaveLength(0); // nothing goes before the turn ends
    await turn();
    expect(link.sent.map((s) => s.calls)).toEqual([[1, 2, 3]]);
    link.sent[0].answer(echo(link.sent[0].calls));
    await expect(answers).resolves.toEqual(['answer 1', 'answer 2', 'answer 3']);
  });

  it('keeps one message in flight: calls made meanwhile go together once its answer is in', async () => {
    const link = manualLink();
    const batcher = new TickBatcher<number, string>(link, 'c', 1_000);
    const first = batcher.send(1);
    await turn();
    const later = [batcher.send(2)];
    await turn();
    later.push(batcher.send(3));
    await turn();
    expect(link.sent).toHaveLength(1); // 2 and 3 wait for the answer to 1
    link.sent[0].answer(echo([1]));
    await expect(first).resolves.toBe('answer 1');
    await turn();
    expect(link.sent.map((s) => s.calls)).toEqual([[1], [2, 3]]);
    link.sent[1].answer(echo([2, 3]));
    await expect(Promise.all(later)).resolves.toEqual(['answer 2', 'answer 3']);
  });

  it('sends what gathered behind a failed message, in order, and rejects only the failed calls', async () => {
    const link = manualLink();
    const batcher = new TickBatcher<number, string>(link, 'c', 1_000);
    const first = batcher.send(1);
    await turn();
    const second = batcher.send(2);
    link.sent[0].fail(new Error('no answer on c within 1000 ms'));
    await expect(first).rejects.toThrow('no answer');
    await turn();
    expect(link.sent.map((s) => s.calls)).toEqual([[1], [2]]);
    link.sent[1].answer(echo([2]));
    await expect(second).resolves.toBe('answer 2');
  });

  it('lets a call sent later ride with the next message, keeping the order the calls were made in', async () => {
    const link = manualLink();
    const batcher = new TickBatcher<number, string>(link, 'c', 1_000);
    const settled = batcher.send(1, true);
    await turn();
    expect(link.sent).toHaveLength(0); // waits for company
    const admitted = batcher.send(2);
    await turn();
    expect(link.sent.map((s) => s.calls)).toEqual([[1, 2]]);
    link.sent[0].answer(echo([1, 2]));
    await expect(Promise.all([settled, admitted])).resolves.toEqual(['answer 1', 'answer 2']);
  });

  it('sends a call made later on its own once LATER_MS pass with no message to ride with', async () => {
    const link = manualLink();
    const batcher = new TickBatcher<number, string>(link, 'c', 1_000);
    const started = Date.now();
    const settled = batcher.send(7, true);
    await until(() => link.sent.length > 0, 'the later call to go', 1_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(LATER_MS - 1);
    expect(link.sent.map((s) => s.calls)).toEqual([[7]]);
    link.sent[0].answer(echo([7]));
    await expect(settled).resolves.toBe('answer 7');
  });

  it('merges calls sent later under one key while unsent, answering each caller, and starts afresh after the message goes', async () => {
    const link = manualLink();
    const batcher = new TickBatcher<number[], string>(link, 'c', 1_000, (into, call) => { into[1] += call[1]; });
    const settles = [batcher.send([1, 5], true, 'a'), batcher.send([2, 1], true, 'b'), batcher.send([1, 7], true, 'a')];
    const admit = batcher.send([9, 1]);
    await turn();
    expect(link.sent.map((s) => s.calls)).toEqual([[[1, 12], [2, 1], [9, 1]]]);
    link.sent[0].answer(['first', 'second', 'third']);
    await expect(Promise.all([...settles, admit])).resolves.toEqual(['first', 'second', 'first', 'third']);
    const next = batcher.send([1, 3], true, 'a');
    const admitAgain = batcher.send([9, 1]);
    await turn();
    expect(link.sent[1].calls).toEqual([[1, 3], [9, 1]]);
    link.sent[1].fail(new Error('gone'));
    await expect(next).rejects.toThrow('gone');
    await expect(admitAgain).rejects.toThrow('gone');
  });
});
