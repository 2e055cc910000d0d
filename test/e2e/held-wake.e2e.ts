import { mkdtemp, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { TaskEnds } from '../../src/common/tasks/task-ends.js';
import { pollUntil } from '../support/poll.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { startFakeOpenAIImages } from '../support/vendors/openai/openai.fake.js';
import { api, createTestDatabase, queryDb, startTestApp, type TestApp, type TestDatabase } from '../support/test-app.js';

/**
 * A request a door holds until its task ends is woken by the end, not by its next read of the row: here
 * the row is read once an hour (HOLD_RECHECK_S=3600) and the request held as long, so without the wake
 * the test would run out of its time.
 * The request is on an instance that runs no worker; the task runs on another, started once the request
 * is held: its end reaches the first instance through PostgreSQL NOTIFY.
 */
describe('a held request woken by its task ending on another instance', () => {
  let db: TestDatabase;
  let door: TestApp;
  let worker: TestApp | undefined;
  let dataDir: string;
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    // the instances share the database and the storage, as a deployment's do
    dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-wake-'));
    door = await startTestApp({ ROLE: 'api', HOLD_RECHECK_S: '3600', IMAGE_HOLD_S: '3600', SPEECH_HOLD_S: '3600', DATA_DIR: dataDir }, { db });
  }, 60_000);
  afterAll(async () => {
    await worker?.close();
    await door.close();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('lets go of a request whose caller left at once, not at its next read of the row (an hour away here)', async () => {
    const key = await door.createKey('held-left');
    const leaving = new AbortController();
    const request = fetch(`${door.url}/openai/v1/images/generations`, { method: 'POST', signal: leaving.signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Never waited for' }) }).catch((e: Error) => e);
    await pollUntil(async () => door.app.get(TaskEnds).waiting, (n) => n === 1, { what: 'the request to be held' });
    leaving.abort();
    expect(((await request) as { name?: string }).name).toBe('AbortError');
    await pollUntil(async () => door.app.get(TaskEnds).waiting, (n) => n === 0, { what: 'the hold to end once its caller left', timeoutMs: 20_000 });
    // the task goes on, for whoever asks for it later
    expect((await queryDb<{ state: string }>(db, "SELECT state FROM tasks WHERE owner = 'held-left'")).map((r) => r.state)).toEqual(['queued']);
  }, 60_000);

  it("OpenAI's image and speech doors answer their tasks' results once a worker elsewhere ends them", async () => {
    const key = await door.createKey('held-wake');
    const image = api(door.url, 'POST', '/openai/v1/images/generations', { key, body: { prompt: 'A lighthouse at dusk', size: '1024x1024' } });
    const speech = fetch(`${door.url}/openai/v1/audio/speech`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'Held, then woken.' }) });
    // both are accepted and held (nothing runs them: this instance has no worker)
    await pollUntil(() => queryDb<{ state: string }>(db, "SELECT state FROM tasks WHERE owner = 'held-wake'"), (rows) => rows.length === 2 && rows.every((r) => r.state === 'queued'), { what: 'both tasks to be queued' });
    worker = await startTestApp({ ROLE: 'worker', DATA_DIR: dataDir }, { db });
    const [made, spoken] = await Promise.all([image, speech]);
    expect([made.status, made.body.error]).toEqual([200, undefined]);
    const meta = await sharp(Buffer.from(made.body.data[0].b64_json, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([1024, 1024]);
    expect([spoken.status, spoken.headers.get('content-type')]).toEqual([200, 'audio/mpeg']);
    expect((await spoken.arrayBuffer()).byteLength).toBeGreaterThan(0);
  }, 60_000);
});

/**
 * The end told while the holding instance could not hear it: its LISTEN connection cut, and every new
 * connection of that instance refused until the task has ended on the other. Once it listens again it
 * reads the rows of what it holds; its row is read once an hour otherwise (HOLD_RECHECK_S=3600).
 */
describe('a held request whose end was told while its instance could not hear', () => {
  it('is answered once the instance listens again', async () => {
    const db = await createTestDatabase({ migrated: true });
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-deaf-'));
    const target = new URL(db.url);
    const listens = new Set<Socket>();
    let refusing = false;
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, (server, client) => {
      if (refusing) {
        client.destroy();
        server.destroy();
        return;
      }
      client.on('data', (chunk: Buffer) => {
        if (chunk.includes('LISTEN "')) listens.add(client);
      });
      server.on('data', (chunk: Buffer) => void client.write(chunk));
    });
    target.port = String(proxy.port);
    const door = await startTestApp({ ROLE: 'api', HOLD_RECHECK_S: '3600', IMAGE_HOLD_S: '3600', DATA_DIR: dataDir }, { db: { ...db, url: target.toString() } });
    let worker: TestApp | undefined;
    try {
      const key = await door.createKey('held-deaf');
      const made = api(door.url, 'POST', '/openai/v1/images/generations', { key, body: { prompt: 'Told while deaf', size: '1024x1024' } });
      await pollUntil(async () => door.app.get(TaskEnds).waiting, (n) => n === 1, { what: 'the request to be held' });
      expect(listens.size).toBeGreaterThan(0);
      refusing = true;
      for (const socket of listens) socket.destroy();
      worker = await startTestApp({ ROLE: 'worker', DATA_DIR: dataDir }, { db });
      await pollUntil(() => queryDb<{ state: string }>(db, "SELECT state FROM tasks WHERE owner = 'held-deaf'"), (rows) => rows[0]?.state === 'succeeded', { what: 'the task to succeed on the worker', timeoutMs: 30_000 });
      refusing = false;
      const answer = await made;
      expect([answer.status, answer.body.error]).toEqual([200, undefined]);
      const meta = await sharp(Buffer.from(answer.body.data[0].b64_json, 'base64')).metadata();
      expect([meta.width, meta.height]).toEqual([1024, 1024]);
    } finally {
      await worker?.close();
      await door.close();
      await proxy.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

/**
 * The database's answer to a task's end lost after its commit (the connection cut once PostgreSQL had sent
 * it), and the database away until the app has found it so: the worker runs the end again once the database
 * answers, finds the task already ended, and wakes the request holding it then, as a first answer would have.
 * Its row is read once an hour here (HOLD_RECHECK_S=3600), so nothing else could.
 */
describe('a held request whose task ended in a commit whose answer was lost', () => {
  const OPENAI_KEY = 'sk-lost-answer-0123456789';
  const ADMIN = 'admin-secret-0123456789';
  let db: TestDatabase;
  let proxy: TcpProxy | undefined;
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    await proxy?.close();
    await db?.drop();
  });
  /** An app whose database is behind a proxy that loses the answer to the first end to `state`. */
  const appLosingTheFirstEnd = async (state: 'succeeded' | 'failed', env: Record<string, string> = {}) => {
    db = await createTestDatabase({ migrated: true });
    const target = new URL(db.url);
    const fault = loseTheFirstAnswerTo(`SET state = '${state}', "lease_owner"`);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, fault.relay);
    target.port = String(proxy.port);
    t = await startTestApp({ HOLD_RECHECK_S: '3600', IMAGE_HOLD_S: '3600', ...env }, { db: { ...db, url: target.toString() } });
    const app = t;
    fault.upAgain = () => said(app, 'the database is unavailable').length > 0;
    return { app, fault };
  };
  const said = (app: TestApp, words: string) => app.logs.lines.filter((l) => String(l.msg).includes(words));

  it('is answered its image once the worker finds its own success committed', async () => {
    const { app, fault } = await appLosingTheFirstEnd('succeeded');
    const key = await app.createKey('lost-answer');
    const made = await api(app.url, 'POST', '/openai/v1/images/generations', { key, body: { prompt: 'A lighthouse at dusk', size: '1024x1024' } });
    expect(fault.fired).toBe(true);
    expect([made.status, made.body.error]).toEqual([200, undefined]);
    const meta = await sharp(Buffer.from(made.body.data[0].b64_json, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([1024, 1024]);
    expect(said(app, 'its end committed on a try whose answer was lost')).toHaveLength(1);
    expect(said(app, 'finished too late')).toEqual([]);
    expect(await queryDb<{ state: string }>(db, "SELECT state FROM tasks WHERE owner = 'lost-answer'")).toEqual([{ state: 'succeeded' }]);
  }, 60_000);

  it("is answered its task's failure once the worker finds its own fail committed", async () => {
    const openai = await startFakeOpenAIImages(OPENAI_KEY);
    try {
      openai.knobs.moderation = true;
      const { app, fault } = await appLosingTheFirstEnd('failed', { IMAGE_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
      const channel = await api(app.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'openai-strict', operations: ['image'], protocol: 'openai', base_url: openai.url, credentials: { api_key: OPENAI_KEY } } });
      expect(channel.status).toBe(201);
      const key = await app.createKey('lost-fail');
      const refused = await api(app.url, 'POST', '/openai/v1/images/generations', { key, body: { prompt: 'Refused by the vendor', size: '1024x1024' } });
      expect(fault.fired).toBe(true);
      expect([refused.status, refused.body.error?.code]).toEqual([400, 'moderation_blocked']);
      const [row] = await queryDb<{ state: string; message: string }>(db, "SELECT state, message FROM tasks WHERE owner = 'lost-fail'");
      expect([row.state, row.message]).toEqual(['failed', expect.stringContaining('moderation_blocked')]);
    } finally {
      await openai.close();
    }
  }, 60_000);
});

/**
 * A proxy fault: the first statement whose text holds `text` (sent as it is on a connection's first run of a
 * prepared statement, and autocommitted) is relayed, and so is PostgreSQL's answer up to its ReadyForQuery
 * with the session idle (the commit has landed) — into nothing: then every connection but the LISTEN one is
 * cut (so no word of a lost connection wakes a waiter: only the worker can) and new ones are refused until
 * `upAgain()` (the app has found the database down, so its worker waits and runs the statement again once
 * its probe gets through).
 */
function loseTheFirstAnswerTo(text: string): { relay: (server: Socket, client: Socket) => void; fired: boolean; upAgain: () => boolean } {
  const marker = Buffer.from(text);
  const open = new Map<Socket, Socket>();
  const listening = new Set<Socket>();
  let armed = true;
  const fault = {
    fired: false,
    upAgain: () => true,
    relay: (server: Socket, client: Socket) => {
      if (fault.fired && !fault.upAgain()) {
        client.destroy();
        server.destroy();
        return;
      }
      open.set(client, server);
      client.once('close', () => open.delete(client));
      let losing = false;
      client.on('data', (chunk: Buffer) => {
        if (chunk.includes('LISTEN "')) listening.add(client);
        if (armed && chunk.includes(marker)) losing = !(armed = false);
      });
      server.on('data', (chunk: Buffer) => {
        if (!losing) return void client.write(chunk);
        // ReadyForQuery last ('Z', length 5, 'I': idle, no transaction open): the answer is all in, and committed
        const n = chunk.length;
        if (n >= 6 && chunk[n - 6] === 0x5a && chunk.readInt32BE(n - 5) === 5 && chunk[n - 1] === 0x49) {
          fault.fired = true;
          for (const [c, sv] of open) {
            if (listening.has(c)) continue;
            c.destroy();
            sv.destroy();
          }
        }
      });
    },
  };
  return fault;
}
