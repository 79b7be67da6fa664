import { randomBytes, randomUUID } from 'node:crypto';
import { mountAdminApi } from '@svc/admin-api';
import { JOBS } from '@svc/domain';
import { adminWithRole, setupOwner, startTestServer, type TestServer, until } from '@svc/testkit';
import { MARZBAN_XRAY_CONFIG, marzbanStore } from '@svc/testkit/marzban-store';
import { marzneshinSqlite } from '@svc/testkit/marzneshin-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type WorkerService } from '../src/worker.ts';

// Issue 34 item 1, the admin API's upload: POST /api/v1/imports takes the old panel's SQLite file
// (multipart), answers 202 with a job at once, and the worker's imports.run imports it with its
// progress and report on the job (GET /api/v1/imports/{id}); a foreign file ends the job failed
// with why, and nothing is imported; bad uploads are 4xx problems and queue nothing; viewers
// cannot upload, and strangers cannot send more than the global body limit.
let s: TestServer;
let token: string;
let viewer: string;
let worker: WorkerService;
beforeAll(async () => {
  s = await startTestServer({ mount: mountAdminApi, config: { http: { import_body_limit_bytes: 2 * 1024 * 1024 } } });
  token = (await setupOwner(s)).access_token;
  viewer = (await adminWithRole(s, token, 'viewer', 'viewer@example.com')).access_token;
  worker = createWorker(s.runtime, { only: [JOBS.importsRun] });
  await worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await s?.stop();
});

const upload = (fields: Record<string, Blob | string>, bearer = token) => {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v, ...(v instanceof Blob ? [`${k}.bin`] : []));
  return fetch(`${s.url}/api/v1/imports`, { method: 'POST', body: form, headers: { authorization: `Bearer ${bearer}` } });
};
const job = async (id: string) =>
  (await fetch(`${s.url}/api/v1/imports/${id}`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<{
    status: string;
    progress: { phase: string; done: number; total: number };
    report: { counts: Record<string, number>; users: Array<{ username: string }>; inbounds: unknown[] } | null;
    error: string | null;
  }>;
const ended = async (id: string) => {
  await until('the import job ended', async () => ['done', 'failed'].includes((await job(id)).status));
  return job(id);
};
const count = async (table: 'subscriptions' | 'import_jobs' | 'import_sources') =>
  (await s.deps.db.selectFrom(table).select('id').execute()).length;

describe('POST /api/v1/imports', () => {
  it('runs a Marzban upload (its file and xray_config.json) as a job: 202 at once, then progress and the report', async () => {
    const node = await s.api.post('/api/v1/nodes', { name: 'Oslo', address: 'osl.example.net' }, { token });
    const database = await marzbanStore({
      secret: randomBytes(32).toString('hex'),
      users: [
        { username: 'alice', proxies: [{ type: 'VLESS', settings: { id: randomUUID(), flow: '' } }] },
        { username: 'bob', proxies: [{ type: 'Trojan', settings: { password: 'bob-holds-this' } }] },
      ],
    });
    const res = await upload({
      file: new Blob([database]),
      xray_config: new Blob([MARZBAN_XRAY_CONFIG]),
      options: JSON.stringify({ from: 'marzban', nodes: ['Oslo'] }),
    });
    expect(res.status).toBe(202);
    const queued = (await res.json()) as { id: string; status: string; file_bytes: number };
    expect(queued).toMatchObject({ status: 'queued', file_bytes: database.byteLength });
    const done = await ended(queued.id);
    expect(done).toMatchObject({ status: 'done', error: null, progress: { phase: 'done', done: 2, total: 2 } });
    expect(done.report?.counts).toMatchObject({ users_created: 2, inbounds_created: 4 });
    expect(done.report?.users.map((u) => u.username)).toEqual(['alice', 'bob']);
    const bound = await s.deps.db.selectFrom('inbounds').select('port').where('node_id', '=', node.body.id).orderBy('port').execute();
    expect(bound.map((r) => r.port)).toEqual([8080, 8081, 8443, 8444]);
    // The file is not kept once the job ended.
    const row = await s.deps.db
      .selectFrom('import_jobs')
      .select(['source_file', 'xray_config'])
      .where('id', '=', queued.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ source_file: null, xray_config: null });
    const list = (await (await fetch(`${s.url}/api/v1/imports`, { headers: { authorization: `Bearer ${viewer}` } })).json()) as {
      items: Array<{ id: string }>;
    };
    expect(list.items[0]?.id).toBe(queued.id);
  });

  it('a Marzneshin dry run reports and writes nothing', async () => {
    const before = await count('subscriptions');
    const file = await marzneshinSqlite({
      services: { main: ['VLESS TCP'] },
      inbounds: [{ tag: 'VLESS TCP', config: { protocol: 'vless', port: 9443, network: 'tcp', tls: 'none' } }],
      users: [{ username: 'carol', key: 'c0ffee00c0ffee00c0ffee00c0ffee00', services: ['main'] }],
    });
    const res = await upload({ file: new Blob([file]), options: JSON.stringify({ from: 'marzneshin', dry_run: true }) });
    expect(res.status).toBe(202);
    const done = await ended(((await res.json()) as { id: string }).id);
    expect(done).toMatchObject({ status: 'done', report: { dry_run: true, counts: { users_created: 1 } } });
    expect(await count('subscriptions')).toBe(before);
  });

  it('an SQLite file of another panel ends the job failed with why, and imports nothing', async () => {
    const before = { subs: await count('subscriptions'), sources: await count('import_sources') };
    const other = await marzneshinSqlite({ services: {}, inbounds: [], users: [] });
    const res = await upload({ file: new Blob([other]), options: JSON.stringify({ from: '3x-ui' }) });
    const done = await ended(((await res.json()) as { id: string }).id);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/3x-ui/);
    expect({ subs: await count('subscriptions'), sources: await count('import_sources') }).toEqual(before);
  });

  it('refuses what is not an upload of an SQLite file with options, and queues nothing', async () => {
    const before = await count('import_jobs');
    const sqlite = new Blob([await marzneshinSqlite({ services: {}, inbounds: [], users: [] })]);
    const cases: Array<[Record<string, Blob | string>, number, RegExp]> = [
      [{ file: new Blob(['not sqlite at all, just text that is long enough'.repeat(4)]), options: '{"from":"marzban"}' }, 400, /SQLite/],
      [{ options: '{"from":"marzban"}' }, 400, /file/],
      [{ file: sqlite, options: 'not json' }, 400, /options/],
      [{ file: sqlite, options: '{"from":"remnawave"}' }, 400, /options\.from/],
      [{ file: sqlite, options: '{"from":"marzban","unknown":1}' }, 400, /options/],
      [{ file: sqlite, xray_config: new Blob(['{}']), options: '{"from":"3x-ui"}' }, 400, /xray_config/],
    ];
    for (const [fields, status, said] of cases) {
      const res = await upload(fields);
      expect(res.status, JSON.stringify(Object.keys(fields))).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect(await res.text()).toMatch(said);
    }
    const json = await fetch(`${s.url}/api/v1/imports`, {
      method: 'POST',
      body: '{"from":"marzban"}',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    expect(json.status).toBe(415);
    expect(await count('import_jobs')).toBe(before);
  });

  it('a viewer may not upload; a stranger is refused before the body is read; an admin over the upload limit gets 413', async () => {
    const sqlite = new Blob([await marzneshinSqlite({ services: {}, inbounds: [], users: [] })]);
    expect((await upload({ file: sqlite, options: '{"from":"marzban"}' }, viewer)).status).toBe(403);
    const big = new Blob([new Uint8Array(3 * 1024 * 1024)]);
    expect((await upload({ file: big, options: '{"from":"marzban"}' }, 'not-a-token')).status).toBe(401);
    const over = await upload({ file: big, options: '{"from":"marzban"}' });
    expect(over.status).toBe(413);
  });
});
