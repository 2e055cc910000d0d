import { createHmac, randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SecretBox } from '../../src/infra/crypto/secret-box.js';
import { applyMigrations, MIGRATIONS_DIR } from '../../src/infra/database/migrator.js';
import { SEALED_COLUMNS } from '../../src/infra/database/secret-sealing.js';
import { Child } from '../support/child-process.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createTestDatabase, queryDb, startTestApp, type TestApp, type TestDatabase } from '../support/test-app.js';
import { type Received, startReceiver, verify } from '../support/webhook-receiver.js';

const quiet = { info: () => undefined, warn: () => undefined };
/** The migration that moved the plain-text secrets aside to be sealed. */
const SEALING_MIGRATION = '20261129000000_sealed_secrets';
const ADMIN = 'admin-secret-0123456789';
const EXPAND = '/video-a/v1/images/editing/expand';
// media in the database: each test app has a DATA_DIR of its own, and links must outlive an instance
const FAST = { ADMIN_API_KEY: ADMIN, STORAGE_DRIVER: 'postgres', ALLOW_PRIVATE_URLS: 'true', CALLBACK_RETRY_SCHEDULE_S: '0.2,0.4,0.6', CALLBACK_TIMEOUT_MS: '2000' };
const newKey = () => randomBytes(32).toString('hex');

/** Every sealed value in the database, read with SQL: which column, which row, its bytes. */
async function sealedValues(db: TestDatabase): Promise<{ where: string; bytes: Buffer }[]> {
  const values: { where: string; bytes: Buffer }[] = [];
  for (const c of SEALED_COLUMNS) {
    const rows = await queryDb<{ ref: string; bytes: Buffer }>(db, `SELECT "${c.key}"::text AS ref, "${c.column}" AS bytes FROM "${c.table}" WHERE "${c.column}" IS NOT NULL ORDER BY 1`);
    values.push(...rows.map((r) => ({ where: `${c.table}.${c.column} ${r.ref}`, bytes: r.bytes })));
  }
  return values;
}

/** Which of `values` a key opens. */
function opensWith(key: string, values: { where: string; bytes: Buffer }[]): string[] {
  const box = new SecretBox(Buffer.from(key, 'hex'));
  return values.filter((v) => {
    try {
      box.open(v.bytes);
      return true;
    } catch {
      return false;
    }
  }).map((v) => v.where);
}

/** Runs the real entry point on `db` and resolves with its exit code and output once it exits (it must, within 60 s). */
async function startRefused(db: TestDatabase, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-sealed-'));
  try {
    const child = Child.start('dist/main.js', [], { DATABASE_URL: db.url, PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'warn', ...env });
    const exit = await Promise.race([child.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running:\n${child.output}`)), 60_000).unref())]);
    return { code: exit.code, output: child.output };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The service's secrets (app_secrets) and the owners' webhook secrets are sealed at rest with the sealing
 * key, as channel credentials are: an upgrade seals what was plain text, a restart opens them, a rotation
 * of the key seals them again, and an instance with another key does not start.
 */
describe('secrets sealed at rest', () => {
  const K1 = newKey();
  const K2 = newKey();
  // what a database of the previous version held in plain text
  const mediaKey = randomBytes(32).toString('base64url');
  const callbackKey = randomBytes(32).toString('base64url');
  const hooksSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const hooksPrevious = `whsec_${randomBytes(24).toString('base64')}`;
  let db: TestDatabase;
  let t: TestApp | undefined;
  let key: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let image: string;
  /** A result link handed out before the restarts and the rotation. */
  let earlyLink: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    image = (await png(300, 300)).toString('base64');
    db = await createTestDatabase();
    const before = await mkdtemp(path.join(tmpdir(), 'mgw-migrations-'));
    try {
      for (const name of (await readdir(MIGRATIONS_DIR)).filter((n) => n < SEALING_MIGRATION)) await cp(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
      await applyMigrations(db.url, quiet, before);
    } finally {
      await rm(before, { recursive: true, force: true });
    }
    await queryDb(db, `INSERT INTO app_secrets (name, value) VALUES ('media_url_signing_key', $1), ('upstream_callback_key', $2)`, [mediaKey, callbackKey]);
    await queryDb(db, `INSERT INTO webhook_secrets (owner, secret, previous_secret, previous_expires_at, rotated_at) VALUES ('hooks', $1, $2, now() + interval '1 day', now())`, [hooksSecret, hooksPrevious]);
  });
  afterAll(async () => {
    await t?.close();
    await receiver.close();
    await db.drop();
  });

  /** An expand task with a callback: its result link and its notifications, once delivered. */
  async function expandWithCallback(name: string): Promise<{ link: string; deliveries: Received[] }> {
    const created = await api(t!.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0, callback_url: `${receiver.url}/${name}` } });
    const id = created.body.data.task_id;
    expect(id).toEqual(expect.any(String));
    const done = await pollUntil(() => api(t!.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { what: `task ${name} to succeed` });
    const deliveries = await pollUntil(async () => receiver.received.filter((r) => r.path === `/${name}`), (d) => d.length === 2, { what: `the notifications of ${name}` });
    return { link: done.body.data.task_result.images[0].url, deliveries };
  }

  const webhookSecret = async () => (await api(t!.url, 'GET', '/admin/owners/hooks/webhook-secret', { key: ADMIN })).body;
  /** Fetches a result link from the instance running now (a link names the instance that answered its task). */
  const download = async (link: string) => {
    const url = new URL(link);
    const res = await fetch(`${t!.url}${url.pathname}${url.search}`);
    await res.arrayBuffer(); // read: an unread body held its connection, and the app's close waited 60 s for it
    return res.status;
  };

  it('an upgrade seals the secrets kept in plain text, and they stay the same secrets', async () => {
    t = await startTestApp({ ...FAST, CHANNEL_SECRET_KEY: K1 }, { db });
    key = await t.createKey('hooks');
    // in the database: sealed, no plain text left, and not the secrets' bytes
    const apps = await queryDb<{ name: string; value: Buffer; plain_value: string | null }>(db, 'SELECT name, value, plain_value FROM app_secrets ORDER BY name');
    expect(apps.map((r) => [r.name, r.plain_value, new SecretBox(Buffer.from(K1, 'hex')).open(r.value)])).toEqual([
      ['media_url_signing_key', null, mediaKey],
      ['sealing-check', null, expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)],
      ['upstream_callback_key', null, callbackKey],
    ]);
    const [hooks] = await queryDb<{ secret: Buffer; previous_secret: Buffer; plain_secret: string | null; plain_previous_secret: string | null }>(db, "SELECT * FROM webhook_secrets WHERE owner = 'hooks'");
    expect([hooks.plain_secret, hooks.plain_previous_secret]).toEqual([null, null]);
    for (const [sealed, plain] of [[hooks.secret, hooksSecret], [hooks.previous_secret, hooksPrevious]] as const) {
      expect(sealed.includes(Buffer.from(plain))).toBe(false);
      expect(sealed.includes(Buffer.from(plain.slice(6), 'base64'))).toBe(false);
    }
    for (const v of await sealedValues(db)) expect([v.where, v.bytes.toString('utf8')]).toEqual([v.where, expect.not.stringMatching(/whsec_|^[A-Za-z0-9_-]{43}$/)]);
    // the admin API shows the owner's secrets, to verify signatures with
    expect(await webhookSecret()).toEqual(expect.objectContaining({ owner: 'hooks', secret: hooksSecret, previous_secret: hooksPrevious }));
    // links are signed with the same key as before, and notifications with both of the owner's secrets
    const { link, deliveries } = await expandWithCallback('upgrade');
    const url = new URL(link);
    const expected = createHmac('sha256', Buffer.from(mediaKey, 'base64url')).update(`${url.pathname.split('/').pop()}.${url.searchParams.get('expires')}`).digest('base64url');
    expect(url.searchParams.get('signature')).toBe(expected);
    expect(await download(link)).toBe(200);
    for (const r of deliveries) {
      expect(() => verify(hooksSecret, r)).not.toThrow();
      expect(() => verify(hooksPrevious, r)).not.toThrow();
    }
    earlyLink = link;
  });

  it('after a restart, links and webhook signatures still verify', async () => {
    await t!.close();
    t = await startTestApp({ ...FAST, CHANNEL_SECRET_KEY: K1 }, { db });
    expect(await download(earlyLink)).toBe(200);
    const { link, deliveries } = await expandWithCallback('restart');
    expect(await download(link)).toBe(200);
    for (const r of deliveries) expect(() => verify(hooksSecret, r)).not.toThrow();
  });

  let underK1: { where: string; bytes: Buffer }[];
  let newSecret: string;
  let channelId: string;

  it('under one key: the rotated webhook secret, the previous one and channel credentials are sealed with it too', async () => {
    // the owner rotates their webhook secret, and an admin adds a channel
    const rotated = await api(t!.url, 'POST', '/admin/owners/hooks/webhook-secret/rotate', { key: ADMIN });
    expect(rotated.body).toEqual(expect.objectContaining({ previous_secret: hooksSecret }));
    newSecret = rotated.body.secret;
    const channel = await api(t!.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'sealed', operations: ['expand'], protocol: 'gateway', base_url: 'https://upstream.example.com', credentials: { api_key: 'k-rotation-0123456789' } } });
    expect(channel.status).toBe(201);
    channelId = channel.body.id;
    underK1 = await sealedValues(db);
    expect(opensWith(K1, underK1)).toEqual(underK1.map((v) => v.where));
    expect(underK1.map((v) => v.where).sort()).toEqual(['app_secrets.value media_url_signing_key', 'app_secrets.value sealing-check', 'app_secrets.value upstream_callback_key', `channels.credentials ${channelId}`, 'webhook_secrets.previous_secret hooks', 'webhook_secrets.secret hooks']);
    const [row] = await queryDb<{ credentials: Buffer }>(db, 'SELECT credentials FROM channels WHERE id = $1', [channelId]);
    expect(row.credentials.includes(Buffer.from('k-rotation-0123456789'))).toBe(false);
  });

  it('a rotation of the sealing key (CHANNEL_SECRET_KEY_PREVIOUS) seals everything again at start: the same secrets, none left under the former key', async () => {
    await t!.close();
    t = undefined;
    t = await startTestApp({ ...FAST, CHANNEL_SECRET_KEY: K2, CHANNEL_SECRET_KEY_PREVIOUS: K1 }, { db });
    expect(t.logs.lines.map((l) => l.msg)).toContain(`sealed ${underK1.length} stored secret(s) again with CHANNEL_SECRET_KEY (they were under CHANNEL_SECRET_KEY_PREVIOUS): every stored secret is now sealed with it; CHANNEL_SECRET_KEY_PREVIOUS can go once every instance runs with this key and has started once`);
    const underK2 = await sealedValues(db);
    expect(underK2.map((v) => v.where)).toEqual(underK1.map((v) => v.where));
    expect(opensWith(K2, underK2)).toEqual(underK2.map((v) => v.where));
    expect(opensWith(K1, underK2)).toEqual([]);
    const [row] = await queryDb<{ credentials: Buffer }>(db, 'SELECT credentials FROM channels WHERE id = $1', [channelId]);
    expect(JSON.parse(new SecretBox(Buffer.from(K2, 'hex')).open(row.credentials))).toEqual({ api_key: 'k-rotation-0123456789' });

    // the same secrets: links handed out before, both webhook signatures, the owner's secrets as shown
    expect(await webhookSecret()).toEqual(expect.objectContaining({ secret: newSecret, previous_secret: hooksSecret }));
    expect(await download(earlyLink)).toBe(200);
    const { deliveries } = await expandWithCallback('rotation');
    for (const r of deliveries) {
      expect(() => verify(newSecret, r)).not.toThrow();
      expect(() => verify(hooksSecret, r)).not.toThrow();
    }
    // what is sealed now is sealed under K2 (the webhook secret of a new owner)
    expect((await api(t.url, 'GET', '/admin/owners/newcomer/webhook-secret', { key: ADMIN })).status).toBe(200);
    expect(opensWith(K1, await sealedValues(db))).toEqual([]);
  });

  it('after the rotation the new key alone starts, and links still verify', async () => {
    await t!.close();
    t = undefined;
    t = await startTestApp({ ...FAST, CHANNEL_SECRET_KEY: K2 }, { db });
    expect(await download(earlyLink)).toBe(200);
    expect((await webhookSecret()).secret).toBe(newSecret);
  });

  it('the former key alone, or a wrong one, refuses to start, naming what does not open and what to do, and changes nothing', async () => {
    const before = await sealedValues(db);
    for (const wrong of [K1, newKey()]) {
      const refused = await startRefused(db, { CHANNEL_SECRET_KEY: wrong });
      expect(refused.code).toBe(1);
      expect(refused.output).toMatch(/Failed to start: 7 stored secret\(s\) do not open with CHANNEL_SECRET_KEY \(the service secret media_url_signing_key, the service secret sealing-check, the service secret upstream_callback_key, the webhook secret of owner hooks, the webhook secret of owner newcomer and 2 more\): they were sealed with another key\. Start with the key they were sealed with/);
      expect(refused.output).toMatch(/put the former one in CHANNEL_SECRET_KEY_PREVIOUS/);
    }
    expect(await sealedValues(db)).toEqual(before);
  });
});

describe('without CHANNEL_SECRET_KEY', () => {
  let db: TestDatabase;
  let dir: string;
  let t: TestApp | undefined;
  let fileKey: string;
  const first = () => path.join(dir, 'first');
  const file = () => path.join(first(), 'sealing.key');

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    dir = await mkdtemp(path.join(tmpdir(), 'mgw-nokey-'));
  });
  afterAll(async () => {
    await t?.close();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('seals with a key made at the first start in DATA_DIR/sealing.key (0600), and warns that a shared database needs CHANNEL_SECRET_KEY', async () => {
    t = await startTestApp({ CHANNEL_SECRET_KEY: '', DATA_DIR: first() }, { db });
    fileKey = (await readFile(file(), 'utf8')).trim();
    expect(fileKey).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    const values = await sealedValues(db);
    expect(values.map((v) => v.where).sort()).toEqual(['app_secrets.value media_url_signing_key', 'app_secrets.value sealing-check', 'app_secrets.value upstream_callback_key']);
    expect(opensWith(fileKey, values)).toEqual(values.map((v) => v.where));
    expect(t.logs.lines.some((l) => l.level === 'warn' && /CHANNEL_SECRET_KEY is not set: the stored secrets are sealed with the key in .*sealing\.key, which every instance on this database must share/.test(String(l.msg)))).toBe(true);
  });

  it('keeps that key across restarts of the same DATA_DIR', async () => {
    await t!.close();
    t = undefined;
    t = await startTestApp({ CHANNEL_SECRET_KEY: '', DATA_DIR: first() }, { db });
    expect((await readFile(file(), 'utf8')).trim()).toBe(fileKey);
    expect(t.logs.lines.some((l) => /made a sealing key/.test(String(l.msg)))).toBe(false);
  });

  it('refuses an instance whose DATA_DIR made another key, naming the file and the variable to set', async () => {
    const refused = await startRefused(db, { CHANNEL_SECRET_KEY: '' });
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/Failed to start: 3 stored secret\(s\) do not open with the key in \S+sealing\.key \(CHANNEL_SECRET_KEY is not set\) .*every instance on one database needs the same CHANNEL_SECRET_KEY/);
  });

  it('opens them with the file\'s key given as CHANNEL_SECRET_KEY', async () => {
    await t!.close();
    t = undefined;
    t = await startTestApp({ CHANNEL_SECRET_KEY: fileKey }, { db });
    expect(t.logs.lines.some((l) => /CHANNEL_SECRET_KEY is not set/.test(String(l.msg)))).toBe(false);
  });
});

describe('two instances without CHANNEL_SECRET_KEY started at once on a new database', () => {
  it('one starts; the other, whose DATA_DIR made another key, refuses at start (the first start seals a check value)', async () => {
    const db = await createTestDatabase();
    const dirs = [await mkdtemp(path.join(tmpdir(), 'mgw-nokey-a-')), await mkdtemp(path.join(tmpdir(), 'mgw-nokey-b-'))];
    const children = dirs.map((dir) => Child.start('dist/main.js', [], { DATABASE_URL: db.url, PORT: '0', DATA_DIR: dir, CHANNEL_SECRET_KEY: '', LOG_LEVEL: 'info' }));
    try {
      // the sealing step of each runs under one lock: whichever comes second finds the first's check value
      const refused = await Promise.race(children.map((c, i) => c.exited.then(() => i)));
      const other = children[1 - refused];
      await other.waitFor(/listening/);
      expect((await children[refused].exited).code).toBe(1);
      // the check value at least; the secrets the first makes at its start too (its media URL signing key, its
      // upstream callback key), those its start had made meanwhile, listed by name
      const refusal = /Failed to start: (\d) stored secret\(s\) do not open with the key in \S+sealing\.key \(CHANNEL_SECRET_KEY is not set\) \(([^)]*)\)/.exec(children[refused].output);
      expect(refusal).not.toBeNull();
      const listed = refusal![2].split(', ');
      expect(listed).toContain('the service secret sealing-check');
      expect([Number(refusal![1]), listed]).toEqual([listed.length, [...listed].sort()]);
      for (const secret of listed) expect(['the service secret media_url_signing_key', 'the service secret sealing-check', 'the service secret upstream_callback_key']).toContain(secret);
    } finally {
      await Promise.all(children.map((c) => c.stop('SIGTERM')));
      await db.drop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the admin key', () => {
  it('refuses to start with a key value the repository ships, before touching a database, and says how to make one', async () => {
    for (const example of ['change-me-admin-key-0000', 'REPLACE_ME']) {
      const child = Child.start('dist/main.js', [], { DATABASE_URL: 'postgresql://127.0.0.1:1/none', PORT: '0', ADMIN_API_KEY: example });
      expect((await child.exited).code).toBe(1);
      expect(child.output).toMatch(/ADMIN_API_KEY is an example value this repository ships .*which anyone can read: set a value of your own, made with openssl rand -hex 32/);
      expect(child.output).not.toContain(example);
    }
  });
});
