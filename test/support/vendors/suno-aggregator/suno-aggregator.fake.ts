import { png } from '../../images.js';
import { testMp3 } from '../../media.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { callBack, type VendorCallback } from '../../vendor-callback.js';
import type { FakeUpstream, Misbehaviour } from '../../fake-upstreams.js';

/**
 * A Suno-style aggregator (new-api's Suno relay and its like): its uploads by URL and its music tasks, from their
 * documented shapes. One vendor, one file: `startFakeAudioAggregator` serves the uploads alone at its root,
 * `startFakeMusicAggregator` the music API and its uploads under /suno.
 */

import { fakeDefaults as defaults } from '../../fake-upstreams.js';

/** A Suno-style aggregator's audio upload: POST /uploads/audio-url, then GET /uploads/{id} until ready. */
export async function startFakeAudioAggregator(apiKey: string): Promise<FakeUpstream> {
  const created: FakeUpstream['created'] = new Map();
  const authFailures: string[] = [];
  const knobs = defaults();
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
  /** Lyrics tasks created (POST /suno/submit/lyrics), by upstream task id: the body sent, and how many times it was fetched. */
  lyrics: Map<string, { body: Record<string, unknown>; polls: number; ended?: boolean; calledBack?: boolean }>;
  /** The aggregator ends lyrics task `id` now, whatever the polls, and POSTs the task, as GET /fetch/{id} answers it, to the create's notify_hook: resolves with that callback once answered. */
  finishLyrics(id: string): Promise<VendorCallback | undefined>;
  /** How the next lyrics tasks end: SUCCESS with lyrics written from the prompt (default), FAILURE with a reason, or never. */
  lyricsEnding: { kind: 'success' } | { kind: 'failure'; reason: string } | { kind: 'never' };
  /** Whether it answers `POST /suno/fetch {ids}` (several tasks at once; off: a 404, as aggregators without it). */
  batchFetch: boolean;
  /** How many `POST /suno/fetch` it answered. */
  batchFetches: number;
}

/**
 * A Suno-API aggregator under /suno: POST /submit/music → { code: "success", data: <task id> }, GET
 * /fetch/{id} → the task with two clips (IN_PROGRESS for the first polls), their MP3s and PNG covers
 * served at /files/…; and its audio upload (POST /uploads/audio-url, GET /uploads/{id}), whose ids are
 * clip ids a continuation may name. A task created with a notify_hook gets its end POSTed there: the task as
 * /fetch answers it (its `data`), as the aggregators that take a notify_hook send it. Its lyrics, in new-api's
 * words: POST /submit/lyrics {prompt, notify_hook?} → { code: "success", data: <task id> }, GET /fetch/{id} → the
 * task (action LYRICS) with its lyrics {id, text, title, status}; POST /fetch {ids} where `batchFetch` is on.
 */
export async function startFakeMusicAggregator(apiKey: string, clipSeconds = 3): Promise<FakeMusicAggregator> {
  const created: FakeUpstream['created'] = new Map();
  const music: FakeMusicAggregator['music'] = new Map();
  const authFailures: string[] = [];
  const knobs = defaults();
  const files = new Map<string, { type: string; bytes: Buffer }>();
  const cover = await png(64, 64);
  const state: { ending: FakeMusicAggregator['ending']; coversMissing: boolean; songBytes: Buffer | null; lyricsEnding: FakeMusicAggregator['lyricsEnding']; batchFetch: boolean; batchFetches: number } = {
    ending: { kind: 'success' },
    coversMissing: false,
    songBytes: null,
    lyricsEnding: { kind: 'success' },
    batchFetch: false,
    batchFetches: 0,
  };
  const lyrics: FakeMusicAggregator['lyrics'] = new Map();
  const lyricsEndings = new Map<string, FakeMusicAggregator['lyricsEnding']>();
  /** A lyrics task as /fetch answers it (new-api's: action LYRICS, its lyrics {id, text, title, status} in `data`). */
  const lyricsTask = (id: string, done: boolean) => {
    const task = lyrics.get(id)!;
    const ending = lyricsEndings.get(id)!;
    const status = !done ? 'IN_PROGRESS' : ending.kind === 'failure' ? 'FAILURE' : 'SUCCESS';
    const prompt = String(task.body.prompt ?? '');
    const data =
      status === 'SUCCESS'
        ? { id: `up-lyr-${id}`, status: 'complete', title: `Upstream: ${prompt.slice(0, 20)}`, text: `[Verse]\nThe aggregator sings of ${prompt}\n\n[Chorus]\n${prompt}, ${prompt}` }
        : { id: `up-lyr-${id}`, status: status === 'FAILURE' ? 'error' : 'running', title: '', text: '' };
    return { task_id: id, action: 'LYRICS', status, fail_reason: ending.kind === 'failure' && done ? ending.reason : '', submit_time: 1795000000, start_time: 1795000001, finish_time: done ? 1795000002 : 0, data };
  };
  const lyricsDone = (id: string) => {
    const task = lyrics.get(id)!;
    return task.ended === true || (task.polls >= knobs.pollsUntilDone && lyricsEndings.get(id)!.kind !== 'never');
  };
  /** The lyrics task's end, called back once where its create named a notify_hook. */
  const lyricsCalledBack = (id: string) => {
    const task = lyrics.get(id)!;
    if (task.calledBack || typeof task.body.notify_hook !== 'string') return Promise.resolve(undefined);
    task.calledBack = true;
    return callBack(task.body.notify_hook, lyricsTask(id, true), callbacks);
  };
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
    if (req.method === 'POST' && url.pathname === '/suno/submit/lyrics') {
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        return sendJson(res, 200, { code: 429, msg: 'too many requests, try again later' });
      }
      const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
      if (typeof body.prompt !== 'string' || !body.prompt) return sendJson(res, 200, { code: 'fail', message: 'prompt is required', data: null });
      const id = `up-lyrics-${lyrics.size + 1}`;
      lyrics.set(id, { body, polls: 0 });
      lyricsEndings.set(id, state.lyricsEnding);
      return sendJson(res, 200, { code: 'success', message: '', data: id });
    }
    const lyricsFetched = /^\/suno\/fetch\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && lyricsFetched && lyrics.has(lyricsFetched[1])) {
      const id = lyricsFetched[1];
      const task = lyrics.get(id)!;
      task.polls++;
      const done = lyricsDone(id);
      sendJson(res, 200, { code: 'success', message: '', data: lyricsTask(id, done) });
      if (done) void lyricsCalledBack(id);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/suno/fetch' && state.batchFetch) {
      state.batchFetches++;
      const ids = (JSON.parse(req.body.toString()) as { ids?: unknown }).ids;
      const tasks = (Array.isArray(ids) ? ids : []).flatMap((id): object[] => {
        if (typeof id !== 'string') return [];
        if (lyrics.has(id)) {
          lyrics.get(id)!.polls++;
          return [lyricsTask(id, lyricsDone(id))];
        }
        if (music.has(id)) {
          const task = music.get(id)!;
          task.polls++;
          return [musicTask(id, task.ended || (task.polls >= knobs.pollsUntilDone && endings.get(id)!.kind !== 'never'))];
        }
        return [];
      });
      return sendJson(res, 200, { code: 'success', message: '', data: tasks });
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
    lyrics,
    finishLyrics: (id: string) => {
      lyrics.get(id)!.ended = true;
      return lyricsCalledBack(id);
    },
    get lyricsEnding() {
      return state.lyricsEnding;
    },
    set lyricsEnding(value) {
      state.lyricsEnding = value;
    },
    get batchFetch() {
      return state.batchFetch;
    },
    set batchFetch(value) {
      state.batchFetch = value;
    },
    get batchFetches() {
      return state.batchFetches;
    },
    close: () => server.close(),
  };
}
