import { png } from './images.js';
import { renderedOnce } from './media.js';
import { sendBytes, sendJson, startServer, type TestServer } from './http-server.js';
import { callBack, type VendorCallback } from './vendor-callback.js';

// The fakes' shared knobs and record (FakeUpstream, Misbehaviour), and the Suno-style aggregators' fakes. Each
// video vendor's fake is in test/support/vendors/<vendor>/ (Kling's expand, video and images in one file).

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

/** The knobs of a fake that misbehaves in no way. */
export const fakeDefaults = (): Misbehaviour => ({ createBusy: 0, createHangMs: 0, queryErrors: 0, pollsUntilDone: 2 });

/** A Suno-style aggregator's audio upload: POST /uploads/audio-url, then GET /uploads/{id} until ready. */
export async function startFakeAudioAggregator(apiKey: string): Promise<FakeUpstream> {
  const created: FakeUpstream['created'] = new Map();
  const authFailures: string[] = [];
  const knobs = fakeDefaults();
  const server = await startServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return sendJson(res, 401, { code: 'unauthorized', message: 'bad key' });
    }
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/uploads/audio-url') {
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        return sendJson(res, 200, { code: 429, msg: 'too many requests, try again later' });
      }
      const id = `clip-${created.size + 1}`;
      created.set(id, { body: JSON.parse(req.body.toString()) as Record<string, unknown>, polls: 0 });
      return sendJson(res, 200, { code: 'success', message: '', data: id });
    }
    const get = /^\/uploads\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && get && created.has(get[1])) {
      const task = created.get(get[1])!;
      task.polls++;
      const status = task.polls < knobs.pollsUntilDone ? 'pending' : knobs.failWith ? 'failed' : 'ready';
      return sendJson(res, 200, {
        code: 'success',
        message: '',
        data: { id: get[1], status, format: 'mp3', duration: 12.5, size_bytes: 204800, sha256: 'ab'.repeat(32), error: status === 'failed' ? knobs.failWith : null },
      });
    }
    sendJson(res, 404, { code: 'not_found', message: 'no such upload' });
  });
  return { server, url: server.url, knobs, created, authFailures, close: () => server.close() };
}

/** A real MP3 of a tone (as an upstream would produce), made with the shipped ffmpeg. */
export function testMp3(seconds: number, frequency = 440): Buffer {
  return renderedOnce('mp3', ['-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${seconds}`, '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '128k']);
}

export interface FakeMusicAggregator extends FakeUpstream {
  /** Music tasks created, by upstream task id: the body sent, and how many times it was fetched (`ended`: finished by `finishMusic`). */
  music: Map<string, { body: Record<string, unknown>; polls: number; ended?: boolean; calledBack?: boolean }>;
  /**
   * The aggregator ends music task `id` now, whatever the polls (as its `ending` says), and POSTs the task, as
   * GET /fetch/{id} answers it, to the create's notify_hook: resolves with that callback once answered.
   */
  finishMusic(id: string): Promise<VendorCallback | undefined>;
  /** How the next tasks end: SUCCESS (default), FAILURE with a reason, a clip in error, or never. */
  ending: { kind: 'success' } | { kind: 'failure'; reason: string } | { kind: 'clip_error'; message: string } | { kind: 'never' };
  /** Answer 404 for covers (the audio is still served). */
  coversMissing: boolean;
  /** The bytes served as the audio of the next tasks' clips (null: an MP3 of a tone made for each). */
  songBytes: Buffer | null;
}

/**
 * A Suno-API aggregator under /suno: POST /submit/music → { code: "success", data: <task id> }, GET
 * /fetch/{id} → the task with two clips (IN_PROGRESS for the first polls), their MP3s and PNG covers
 * served at /files/…; and its audio upload (POST /uploads/audio-url, GET /uploads/{id}), whose ids are
 * clip ids a continuation may name. A task created with a notify_hook gets its end POSTed there: the task as
 * /fetch answers it (its `data`), as the aggregators that take a notify_hook send it.
 */
export async function startFakeMusicAggregator(apiKey: string, clipSeconds = 3): Promise<FakeMusicAggregator> {
  const created: FakeUpstream['created'] = new Map();
  const music: FakeMusicAggregator['music'] = new Map();
  const authFailures: string[] = [];
  const knobs = fakeDefaults();
  const files = new Map<string, { type: string; bytes: Buffer }>();
  const cover = await png(64, 64);
  const state: { ending: FakeMusicAggregator['ending']; coversMissing: boolean; songBytes: Buffer | null } = { ending: { kind: 'success' }, coversMissing: false, songBytes: null };
  const endings = new Map<string, FakeMusicAggregator['ending']>();
  const callbacks: VendorCallback[] = [];
  let base = '';
  /** The task as /fetch answers it (its `data`), ended or not. */
  const musicTask = (id: string, done: boolean) => {
    const task = music.get(id)!;
    const ending = endings.get(id)!;
    const status = !done ? 'IN_PROGRESS' : ending.kind === 'failure' ? 'FAILURE' : ending.kind === 'clip_error' ? 'IN_PROGRESS' : 'SUCCESS';
    const clips = [0, 1].map((n) => ({
      id: `up-clip-${id.slice(8)}-${n}`,
      status: done ? (ending.kind === 'clip_error' && n === 1 ? 'error' : 'complete') : 'streaming',
      audio_url: done ? `${base}/files/${id}-${n}.mp3` : '',
      image_url: done ? `${base}/files/${id}.png` : '',
      title: task.body.title ?? '',
      metadata: { duration: done ? clipSeconds : null, error_message: ending.kind === 'clip_error' && done && n === 1 ? ending.message : null },
    }));
    return { task_id: id, status, fail_reason: ending.kind === 'failure' && done ? ending.reason : '', data: clips };
  };
  /** The task's end, called back once. */
  const calledBack = (id: string) => {
    const task = music.get(id)!;
    task.calledBack = true;
    return callBack(task.body.notify_hook, musicTask(id, true), callbacks);
  };
  const server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && file && files.has(file[1]) && !(state.coversMissing && file[1].endsWith('.png'))) return sendBytes(res, files.get(file[1])!.type, files.get(file[1])!.bytes);
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return sendJson(res, 401, { code: 'unauthorized', message: 'bad key' });
    }
    if (req.method === 'POST' && url.pathname === '/suno/submit/music') {
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        return sendJson(res, 200, { code: 429, msg: 'too many requests, try again later' });
      }
      const id = `up-task-${music.size + 1}`;
      music.set(id, { body: JSON.parse(req.body.toString()) as Record<string, unknown>, polls: 0 });
      endings.set(id, state.ending);
      for (const n of [0, 1]) files.set(`${id}-${n}.mp3`, { type: 'audio/mpeg', bytes: state.songBytes ?? testMp3(clipSeconds, 300 + 100 * music.size + 50 * n) });
      files.set(`${id}.png`, { type: 'image/png', bytes: cover });
      if (knobs.resetAfterCreate) {
        knobs.resetAfterCreate--;
        return void res.socket?.resetAndDestroy();
      }
      return sendJson(res, 200, { code: 'success', message: '', data: id });
    }
    const fetched = /^\/suno\/fetch\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && fetched && music.has(fetched[1])) {
      const id = fetched[1];
      const task = music.get(id)!;
      task.polls++;
      const done = task.ended || (task.polls >= knobs.pollsUntilDone && endings.get(id)!.kind !== 'never');
      sendJson(res, 200, { code: 'success', message: '', data: musicTask(id, done) });
      if (done && !task.calledBack) void calledBack(id);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/suno/uploads/audio-url') {
      const id = `up-upload-${created.size + 1}`;
      created.set(id, { body: JSON.parse(req.body.toString()) as Record<string, unknown>, polls: 0 });
      return sendJson(res, 200, { code: 'success', message: '', data: id });
    }
    const upload = /^\/suno\/uploads\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && upload && created.has(upload[1])) {
      return sendJson(res, 200, { code: 'success', message: '', data: { id: upload[1], status: 'ready', format: 'wav', duration: 12, size_bytes: 1000, sha256: 'cd'.repeat(32), error: null } });
    }
    sendJson(res, 404, { code: 'not_found', message: 'no such task' });
  });
  base = server.url;
  return {
    server,
    url: server.url,
    knobs,
    created,
    music,
    callbacks,
    finishMusic: async (id: string) => {
      const task = music.get(id)!;
      task.ended = true;
      return task.calledBack ? undefined : calledBack(id);
    },
    authFailures,
    get ending() {
      return state.ending;
    },
    set ending(value) {
      state.ending = value;
    },
    get coversMissing() {
      return state.coversMissing;
    },
    set coversMissing(value) {
      state.coversMissing = value;
    },
    get songBytes() {
      return state.songBytes;
    },
    set songBytes(value) {
      state.songBytes = value;
    },
    close: () => server.close(),
  };
}
