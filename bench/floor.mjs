// The floor the accept path is measured against: bare node:http + pg doing the least durable work a
// gateway must do per submission. It looks the key up by its prefix and checks its SHA-256 hash, caching
// the lookup for AUTH_CACHE_TTL_MS (2 s) as the gateway does, then in one transaction inserts the task
// (and, for expand, the decoded image) and its job row, and answers 201 with the record. No framework,
// no validation beyond parsing, no logging.
//
//   DATABASE_URL=postgresql://… PORT=3900 node bench/floor.mjs
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.FLOOR_POOL_SIZE ?? 10) });
const port = Number(process.env.PORT ?? 3900);

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const AUTH_CACHE_TTL_MS = 2000;
const keys = new Map();

/** The key's row by its prefix, from memory for AUTH_CACHE_TTL_MS (as the gateway's KeysService). */
async function keyRow(prefix) {
  const cached = keys.get(prefix);
  if (cached && cached.expiresAt > Date.now()) return cached.row;
  const { rows } = await pool.query('SELECT owner, key_hash, revoked_at FROM api_keys WHERE prefix = $1', [prefix]);
  keys.set(prefix, { row: rows[0] ?? null, expiresAt: Date.now() + AUTH_CACHE_TTL_MS });
  return rows[0] ?? null;
}

async function owner(header) {
  const key = /^Bearer (mgw_[A-Za-z0-9]{48})$/.exec(header ?? '')?.[1];
  if (!key) return null;
  const row = await keyRow(key.slice(0, 12));
  const hash = createHash('sha256').update(key).digest();
  if (!row || row.revoked_at || !timingSafeEqual(hash, Buffer.from(row.key_hash, 'hex'))) return null;
  return row.owner;
}

async function inTransaction(work) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

const job = (client, name, data) => client.query('INSERT INTO pgboss.job (id, name, data) VALUES ($1, $2, $3)', [randomUUID(), name, data]);

async function createGeneration(who, body) {
  const id = randomUUID();
  const row = await inTransaction(async (client) => {
    const params = { prompt: String(body.prompt), loop: body.loop ?? false, ...(body.aspect_ratio ? { aspectRatio: body.aspect_ratio } : {}), door: 'luma' };
    const { rows } = await client.query(
      `INSERT INTO tasks (id, kind, owner, params, deadline_at, slots, credits)
       VALUES ($1, 'video', $2, $3, now() + interval '30 minutes', 1, 5) RETURNING id, state, created_at`,
      [id, who, params],
    );
    await job(client, 'video.run', { taskId: id });
    return rows[0];
  });
  return [201, { id: row.id, state: 'pending', created_at: row.created_at.toISOString() }];
}

async function createExpand(who, body) {
  const id = randomUUID();
  const bytes = Buffer.from(String(body.image), 'base64');
  const row = await inTransaction(async (client) => {
    const params = { up_ratio: body.up_expansion_ratio, bottom_ratio: body.bottom_expansion_ratio, left_ratio: body.left_expansion_ratio, right_ratio: body.right_expansion_ratio, n: 1, watermark: false };
    const { rows } = await client.query(
      `INSERT INTO tasks (id, kind, owner, params, deadline_at, slots, credits)
       VALUES ($1, 'expand', $2, $3, now() + interval '10 minutes', 1, 1) RETURNING id, state, created_at`,
      [id, who, params],
    );
    await client.query('INSERT INTO expand_inputs (task_id, bytes) VALUES ($1, $2)', [id, bytes]);
    await job(client, 'expand.run', { taskId: id });
    return rows[0];
  });
  return [200, { code: 0, message: 'SUCCEED', request_id: randomUUID(), data: { task_id: row.id, task_status: 'submitted', created_at: row.created_at.getTime() } }];
}

const routes = { '/video-b/v1/generations': createGeneration, '/video-a/v1/images/editing/expand': createExpand };

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      const route = req.method === 'POST' ? routes[req.url] : undefined;
      if (!route) return send(res, 404, { code: 1203, message: 'no route' });
      const who = await owner(req.headers.authorization);
      if (!who) return send(res, 401, { code: 1000, message: 'API key is not valid' });
      const [status, body] = await route(who, JSON.parse(Buffer.concat(chunks).toString('utf8')));
      send(res, status, body);
    } catch (err) {
      send(res, 500, { code: 5000, message: String(err) });
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`floor listening on ${port}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
