import { once } from 'node:events';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { jwtVerify } from 'jose';
import { png } from './images.js';
import { sizedMp4, testMp4 } from './media.js';
import { sendBytes, sendJson, startServer, type TestServer } from './http-server.js';
import { callBack, type VendorCallback } from './vendor-callback.js';

/** Knobs a test turns to make a fake upstream misbehave. */
export interface Misbehaviour {
  /** Answer the next N create requests "busy" (HTTP 429, Retry-After: 0, or busyAnswer), creating nothing. */
  createBusy: number;
  /** How a busy Kling answers: HTTP status and envelope code (429 and 1302 unless set; Kling also sends 1303 under 200), and its own words if given. */
  busyAnswer?: { status: number; code: number; retryAfter?: string; message?: string };
  /** Create the task, then hold the answer this long (longer than the client waits: an ambiguous create). */
  createHangMs: number;
  /** Luma, Kling: create the task, then answer only once this settles (when the test lets it). */
  createAnswerHeld?: Promise<unknown>;
  /** Refuse creates with this HTTP status and body. */
  createRefusal?: { status: number; body: unknown };
  /** Answer the next N queries with 500. */
  queryErrors: number;
  /** End tasks failed with this message instead of succeeding. */
  failWith?: string;
  /** Queries before a task is done. */
  pollsUntilDone: number;
  /** Luma: serve a result video this many bytes long (the test clip, then zeros), streamed from one small buffer. */
  videoBytes?: number;
  /** Luma: serve each generation's video at the size and length it asked (resolution, aspect_ratio, duration). */
  render?: boolean;
  /** Luma: name result files under this base (a file host of its own) instead of the address it was asked at. */
  resultBase?: string;
  /** Kling: refuse every credential (401, code 1000), as when an account's keys are revoked. */
  rejectAuth?: boolean;
  /** Kling: keep every task processing, whatever pollsUntilDone says, until this is set false. */
  hold?: boolean;
  /** Kling: answer the next N queries (polls) 429 with this Retry-After (and code 1302), as a rate-limited account. */
  pollBusy?: { count: number; retryAfter?: string };
  /** Kling: answer each query this long after it arrives (so two queries of one task at once would overlap). */
  queryDelayMs?: number;
  /** Kling: leave every query signed by this account (access key) unanswered until its client goes away, as a hung upstream. */
  stallAccount?: string;
  /** Music aggregator: make the next N songs, then reset the connection before answering (the create's answer lost). */
  resetAfterCreate?: number;
}

export interface FakeUpstream {
  server: TestServer;
  url: string;
  knobs: Misbehaviour;
  /** Tasks created, by upstream id (Kling: with when; `ended`: finished by `finish`; `calledBack`: its end was called back). */
  created: Map<string, { body: Record<string, unknown>; polls: number; at?: number; ended?: boolean; calledBack?: boolean }>;
  /** Luma, Kling: the callbacks sent to creates' callback_url (each task's end), in order. */
  callbacks?: VendorCallback[];
  /**
   * Luma, Kling: the vendor ends task `id` now, whatever the polls (failed with `failWith` when set, else
   * succeeded), and POSTs its end to the create's callback_url: resolves with that callback once answered.
   */
  finish?(id: string): Promise<VendorCallback | undefined>;
  /** Kling: every query of a task, by upstream id: when, by which account (the JWT's iss), and whether it was answered as processing. */
  queries?: { id: string; at: number; account: string; processing: boolean }[];
  /** Kling: queries that arrived while another query of the same task was still being answered. */
  overlaps?: { id: string; at: number; accounts: string[] }[];
  /** Kling: the tasks of the queries left unanswered by `stallAccount`, as they arrived. */
  stalled?: string[];
  authFailures: string[];
  close(): Promise<void>;
}

const defaults = (): Misbehaviour => ({ createBusy: 0, createHangMs: 0, queryErrors: 0, pollsUntilDone: 2 });

/**
 * The Kling account (access key) whose valid JWT the request carries, verified as Kling does (HS256 signed
 * with the secret key, iss = access key, exp = now + 1800 s, nbf = now - 5 s); null when it carries none
 * (why, pushed to `failures`).
 */
export async function klingAccount(headers: IncomingHttpHeaders, accounts: Map<string, string>, failures: string[]): Promise<string | null> {
  const token = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
  try {
    if (!token) throw new Error('no bearer token');
    const iss = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString() || '{}').iss as string;
    const secret = accounts.get(iss);
    if (!secret) throw new Error(`unknown access key ${iss}`);
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret), { issuer: iss, algorithms: ['HS256'] });
    const now = Math.floor(Date.now() / 1000);
    if (protectedHeader.typ !== 'JWT') throw new Error('typ is not JWT');
    // as Kling's sample mints them: valid 30 minutes from minting, usable from 5 s before (jwtVerify checks both against now)
    if (payload.exp === undefined || payload.nbf === undefined || payload.exp - payload.nbf !== 1805) throw new Error(`exp - nbf is not 1805 s: ${payload.exp! - payload.nbf!}`);
    if (payload.exp - now > 1800) throw new Error(`exp is more than 1800 s away: ${payload.exp - now}`);
    return iss;
  } catch (err) {
    failures.push((err as Error).message);
    return null;
  }
}

/**
 * Kling's image expand API: POST /v1/images/editing/expand and GET …/{task_id or external_task_id},
 * answered by the `{code, message, request_id, data}` envelope, behind a JWT it verifies as Kling does
 * (HS256 signed with the secret key, iss = access key, exp = now + 1800 s, nbf = now - 5 s). A task created
 * with a callback_url gets its end POSTed there: the task record (task_id, task_status at the top level, no
 * envelope), as Kling's callback protocol gives it.
 */
export async function startFakeKling(accessKey: string, secretKey: string, others: [string, string][] = []): Promise<FakeUpstream> {
  const created: FakeUpstream['created'] = new Map();
  const byExternalId = new Map<unknown, string>();
  const queries: NonNullable<FakeUpstream['queries']> = [];
  const overlaps: NonNullable<FakeUpstream['overlaps']> = [];
  const answering = new Map<string, string[]>();
  const stalled: string[] = [];
  const accounts = new Map([[accessKey, secretKey], ...others]);
  const authFailures: string[] = [];
  const knobs = defaults();
  const image = await png(640, 480);
  let seq = 0;
  const envelope = (data: unknown, code = 0, message = 'SUCCEED') => ({ code, message, request_id: `kling-req-${++seq}`, data });

  const authorised = (headers: IncomingHttpHeaders) => klingAccount(headers, accounts, authFailures);
  const callbacks: VendorCallback[] = [];
  /** The task as a query answers it (its `data`) and its callback carries it. */
  const taskRecord = (id: string, status: string) => {
    const task = created.get(id)!;
    const n = Number(task.body.n ?? 1);
    return {
      task_id: id,
      task_status: status,
      task_status_msg: status === 'failed' ? knobs.failWith : '',
      task_info: { external_task_id: task.body.external_task_id },
      task_result: { images: status === 'succeed' ? Array.from({ length: n }, (_, i) => ({ index: i, url: `${server.url}/files/${id}-${i}.png` })) : [] },
    };
  };
  /** The task's end, called back once. */
  const calledBack = (id: string) => {
    const task = created.get(id)!;
    task.calledBack = true;
    return callBack(task.body.callback_url, taskRecord(id, knobs.failWith ? 'failed' : 'succeed'), callbacks);
  };

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/files/')) return sendBytes(res, 'image/png', image);
    const account = knobs.rejectAuth ? null : await authorised(req.headers);
    if (!account) return sendJson(res, 401, envelope(null, 1000, 'Authentication failed'));
    if (req.method === 'GET' && url.pathname === '/v1/images/editing/expand') return sendJson(res, 200, envelope([]));
    if (req.method === 'POST' && url.pathname === '/v1/images/editing/expand') {
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        const busy = knobs.busyAnswer ?? { status: 429, code: 1302 };
        if (busy.retryAfter !== undefined) res.setHeader('retry-after', busy.retryAfter);
        else if (busy.status === 429) res.setHeader('retry-after', '0');
        const messages: Record<number, string> = { 1102: 'Account exception: resource pack exhausted', 1302: 'API request too fast', 1303: 'Concurrent tasks exceed the limit of the resource pack' };
        return sendJson(res, busy.status, envelope(null, busy.code, busy.message ?? messages[busy.code] ?? 'busy'));
      }
      if (knobs.createRefusal) return sendJson(res, knobs.createRefusal.status, knobs.createRefusal.body);
      const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
      const id = `kling-${created.size + 1}`;
      created.set(id, { body, polls: 0, at: Date.now() });
      byExternalId.set(body.external_task_id, id);
      if (knobs.createHangMs) await new Promise((r) => setTimeout(r, knobs.createHangMs));
      if (knobs.createAnswerHeld) await knobs.createAnswerHeld;
      return sendJson(res, 200, envelope({ task_id: id, task_status: 'submitted', task_info: { external_task_id: body.external_task_id }, created_at: Date.now(), updated_at: Date.now() }));
    }
    const query = /^\/v1\/images\/editing\/expand\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && query) {
      if (knobs.queryErrors > 0) {
        knobs.queryErrors--;
        return sendJson(res, 500, envelope(null, 5000, 'Server internal error'));
      }
      if (knobs.pollBusy && knobs.pollBusy.count > 0) {
        knobs.pollBusy.count--;
        if (knobs.pollBusy.retryAfter !== undefined) res.setHeader('retry-after', knobs.pollBusy.retryAfter);
        return sendJson(res, 429, envelope(null, 1302, 'API request too fast'));
      }
      const key = decodeURIComponent(query[1]);
      const id = created.has(key) ? key : byExternalId.get(key);
      const task = id ? created.get(id) : undefined;
      if (!id || !task) return sendJson(res, 404, envelope(null, 1203, 'The requested resource does not exist'));
      const others = answering.get(id) ?? [];
      if (others.length) overlaps.push({ id, at: Date.now(), accounts: [...others, account] });
      answering.set(id, [...others, account]);
      res.once('close', () => {
        const left = answering.get(id)!.slice(1);
        if (left.length) answering.set(id, left);
        else answering.delete(id);
      });
      if (knobs.stallAccount === account) {
        stalled.push(id);
        return; // answered never: the request ends when its client goes away
      }
      if (knobs.queryDelayMs) await new Promise((r) => setTimeout(r, knobs.queryDelayMs));
      task.polls++;
      const done = task.ended || (!knobs.hold && task.polls >= knobs.pollsUntilDone);
      queries.push({ id, at: Date.now(), account, processing: !done });
      const status = !done ? 'processing' : knobs.failWith ? 'failed' : 'succeed';
      sendJson(res, 200, envelope(taskRecord(id, status)));
      if (done && !task.calledBack) void calledBack(id);
      return;
    }
    sendJson(res, 404, envelope(null, 1203, 'no such route'));
  });
  const finish = async (id: string) => {
    const task = created.get(id)!;
    task.ended = true;
    return task.calledBack ? undefined : calledBack(id);
  };
  return { server, url: server.url, knobs, created, queries, overlaps, stalled, callbacks, finish, authFailures, close: () => server.close() };
}

/**
 * Luma's generations API: queued → dreaming → completed | failed, with `failure_reason` and `assets`. A
 * generation created with a callback_url gets its end POSTed there, the generation object as GET answers it
 * (Luma's changelog, "Callbacks": a POST with the Generation object as its body on its updates).
 */
export async function startFakeLuma(apiKey: string): Promise<FakeUpstream> {
  const created: FakeUpstream['created'] = new Map();
  const authFailures: string[] = [];
  const callbacks: VendorCallback[] = [];
  const knobs = defaults();
  const video = testMp4(1);
  const thumb = await png(320, 240);
  const generation = (id: string, state: string, base: string) => ({
    id,
    state,
    failure_reason: state === 'failed' ? knobs.failWith : null,
    created_at: new Date().toISOString(),
    assets: state === 'completed' ? { video: knobs.render ? `${base}/files/gen/${id}.mp4` : `${base}/files/video.mp4`, image: `${base}/files/thumb.png` } : null,
    request: created.get(id)?.body,
  });
  /** The generation's end, called back once. */
  const calledBack = (id: string, base: string) => {
    const task = created.get(id)!;
    task.calledBack = true;
    return callBack(task.body.callback_url, generation(id, knobs.failWith ? 'failed' : 'completed', base), callbacks);
  };
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/files/video.mp4') return knobs.videoBytes ? sendLong(res, 'video/mp4', video, knobs.videoBytes) : sendBytes(res, 'video/mp4', video);
    if (url.pathname === '/files/thumb.png') return sendBytes(res, 'image/png', thumb);
    const own = /^\/files\/gen\/(.+)\.mp4$/.exec(url.pathname);
    if (own && created.has(own[1])) return sendBytes(res, 'video/mp4', sizedMp4(lumaSize(created.get(own[1])!.body), Number.parseInt(String(created.get(own[1])!.body.duration ?? '5s'), 10)));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return sendJson(res, 401, { detail: 'Invalid API key' });
    }
    // results are named where the upstream was asked (relay.internal when the gateway asked it there)
    const base = knobs.resultBase ?? (req.headers.host ? `http://${req.headers.host}` : server.url);
    const record = (id: string, state: string) => generation(id, state, base);
    if (req.method === 'GET' && url.pathname === '/credits') return sendJson(res, 200, { credit_balance: 1000 });
    if (req.method === 'POST' && url.pathname === '/generations') {
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        res.setHeader('retry-after', '0');
        return sendJson(res, 429, { detail: 'Too many concurrent generations' });
      }
      if (knobs.createRefusal) return sendJson(res, knobs.createRefusal.status, knobs.createRefusal.body);
      const id = `luma-${created.size + 1}`;
      created.set(id, { body: JSON.parse(req.body.toString()) as Record<string, unknown>, polls: 0 });
      if (knobs.createHangMs) await new Promise((r) => setTimeout(r, knobs.createHangMs));
      if (knobs.createAnswerHeld) await knobs.createAnswerHeld;
      return sendJson(res, 201, record(id, 'queued'));
    }
    const get = /^\/generations\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && get && created.has(get[1])) {
      const task = created.get(get[1])!;
      task.polls++;
      const state = !task.ended && task.polls < knobs.pollsUntilDone ? 'dreaming' : knobs.failWith ? 'failed' : 'completed';
      sendJson(res, 200, record(get[1], state));
      if (state !== 'dreaming' && !task.calledBack) void calledBack(get[1], base);
      return;
    }
    sendJson(res, 404, { detail: 'Not found' });
  });
  const finish = async (id: string) => {
    const task = created.get(id)!;
    task.ended = true;
    return task.calledBack ? undefined : calledBack(id, knobs.resultBase ?? server.url);
  };
  return { server, url: server.url, knobs, created, callbacks, finish, authFailures, close: () => server.close() };
}

/** The frame size of a Luma request: its resolution's height at its aspect ratio (even sides). */
function lumaSize(body: Record<string, unknown>): string {
  const height = { '540p': 540, '720p': 720, '1080p': 1080, '4k': 2160 }[String(body.resolution ?? '720p')] ?? 720;
  const [w, h] = String(body.aspect_ratio ?? '16:9').split(':').map(Number);
  const width = Math.round((height * w) / h / 2) * 2;
  return w >= h ? `${width}x${height}` : `${height}x${Math.round((height * h) / w / 2) * 2}`;
}

/** `head`, then zeros up to `size` bytes, written as the client reads them: the server never holds the whole body. */
async function sendLong(res: ServerResponse, contentType: string, head: Buffer, size: number): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'content-length': size });
  const zeros = Buffer.alloc(1024 * 1024);
  let sent = 0;
  while (sent < size) {
    const chunk = sent === 0 ? head.subarray(0, size) : zeros.subarray(0, Math.min(zeros.length, size - sent));
    sent += chunk.length;
    if (!res.write(chunk)) await once(res, 'drain');
  }
  res.end();
}
