// The request/answer helper under the workers' IPC (src/cluster/ipc.ts), on
// an in-memory pair of ports that delivers asynchronously, as a channel does.
import { IpcPeer, type IpcHandler } from '../../../src/cluster/ipc';
import { portPair } from '../../support/ipc-ports';

describe('IpcPeer', () => {
  const setUp = (handlers: Record<string, IpcHandler> = {}) => {
    const [primaryPort, workerPort] = portPair();
    const primary = new IpcPeer(primaryPort, new Map(Object.entries(handlers)));
    const worker = new IpcPeer(workerPort, new Map([['echo', (body: unknown) => body]]));
    return { primary, worker, workerPort };
  };

  it('answers a request with the handler\'s value, sync or async, and tells the handler who asked', async () => {
    const { primary, worker } = setUp({ add: async (body) => (body as number[]).reduce((a, b) => a + b, 0), who: (_b, from) => from });
    await expect(worker.request('add', [1, 2, 3])).resolves.toBe(6);
    await expect(worker.request('who', null)).resolves.toBe(1); // the asking worker's id
    await expect(primary.request('echo', { a: [1] })).resolves.toEqual({ a: [1] });
  });

  it('keeps concurrent requests apart', async () => {
    const { worker } = setUp({ slow: (body) => new Promise((r) => setTimeout(() => r(body), 20 - (body as number))) });
    await expect(Promise.all([1, 2, 3, 4].map((n) => worker.request('slow', n)))).resolves.toEqual([1, 2, 3, 4]);
  });

  it('rejects with the handler\'s error, and names a channel nothing handles', async () => {
    const { worker } = setUp({ fail: () => { throw new Error('no such queue'); } });
    await expect(worker.request('fail', null)).rejects.toThrow('no such queue');
    await expect(worker.request('nowhere', null)).rejects.toThrow('nothing handles nowhere');
  });

  it('rejects after its timeout when no answer comes, and at once when the channel is closed or the peer is gone', async () => {
    const { worker, workerPort } = setUp({ never: () => new Promise(() => undefined) });
    await expect(worker.request('never', null, 50)).rejects.toThrow('no answer on never within 50 ms');
    const pending = worker.request('never', null);
    worker.close('the primary is gone');
    await expect(pending).rejects.toThrow('the primary is gone');
    workerPort.up = false;
    await expect(worker.request('never', null)).rejects.toThrow('channel closed');
  });

  it('lets other messages on the channel pass untouched', async () => {
    const [a, b] = portPair();
    const seen: unknown[] = [];
    b.onMessage((m) => seen.push(m));
    new IpcPeer(b, new Map());
    a.send({ channel: 'rate_limiter_flexible', type: 'init' }, () => undefined);
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([{ channel: 'rate_limiter_flexible', type: 'init' }]);
  });
});
