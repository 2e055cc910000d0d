import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ffmpegBinary } from '../../../../src/infra/ffmpeg/ffmpeg-binary.js';
import { continued } from '../continued-song.js';
import { renderedOnce, testMp3 } from '../../media.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { fakeDefaults, type FakeUpstream } from '../../fake-upstreams.js';

/**
 * Mureka's API (platform.mureka.ai), from its documented shapes: Bearer key; errors `{error: {message},
 * trace_id}` (400 the request, 401 the key, 429 busy or out of quota); `POST /v1/song/generate` (`lyrics`
 * required, ≤ 3,000; `model`; `n` 1–3, 2 by default; `prompt` ≤ 1,024), `POST /v1/instrumental/generate`
 * (`model` not o2; `prompt` or `instrumental_id`), `POST /v1/song/extend` (`song_id` of one of its takes or
 * `upload_audio_id` of an `audio` upload, one of them; `extend_at` 8,000–420,000 ms; `lyrics`), each answering
 * `{id, created_at, model, status: "preparing", trace_id}`; `GET /v1/song/query/{id}` and
 * `/v1/instrumental/query/{id}` (queued, running, then succeeded with `choices`: id, index, MP3 url, flac_url,
 * duration in ms, lyrics_sections of lines with their words timed); `POST /v1/lyrics/generate` (`{title,
 * lyrics}`); `POST /v1/files/upload` (multipart `file`, MP3 or M4A for `audio`, and `purpose`); `GET
 * /v1/account/billing`. An unknown task is a 404. A continuation's takes are whole songs: the clip continued up
 * to `extend_at` (its own samples), then a tone of `clipSeconds` (what Mureka made).
 */

/** What a Mureka task was asked: its route, the body, and how it went. */
export interface MurekaTask {
  kind: 'song' | 'instrumental' | 'extend';
  body: Record<string, unknown>;
  /** A continuation: the clip it continues (MP3 or M4A bytes), and how long it lasts (s). */
  source?: Buffer;
  sourceS?: number;
  polls: number;
  model: string;
  n: number;
}

export interface FakeMureka extends FakeUpstream {
  tasks: Map<string, MurekaTask>;
  /** Uploads (`POST /v1/files/upload`), by file id: their purpose, file name, Content-Type and bytes. */
  uploads: Map<string, { purpose: string; filename: string; type: string; bytes: Buffer }>;
  /** Bodies of `POST /v1/lyrics/generate`, in order. */
  lyricsAsked: Record<string, unknown>[];
  /** How the next tasks end: succeeded (default), failed with a reason, timeouted, or never. */
  ending: { kind: 'success' } | { kind: 'failed'; reason: string } | { kind: 'timeouted' } | { kind: 'never' };
  /** Answer the next creates 429 "You exceeded your current quota" (the account's credit). */
  quotaExceeded: number;
  /** Answer the next lyrics generations (`POST /v1/lyrics/generate`) with this status and error message (once), as its moderation or servers would. */
  lyricsRefusal?: { status: number; message: string };
}

const SONG_MODELS = ['auto', 'mureka-7.5', 'mureka-7.6', 'mureka-o2', 'mureka-8', 'mureka-9'];
const INSTRUMENTAL_MODELS = ['auto', 'mureka-7.5', 'mureka-7.6', 'mureka-8', 'mureka-9'];
const PURPOSES = ['reference', 'vocal', 'melody', 'instrumental', 'voice', 'audio'];

export async function startFakeMureka(apiKey: string, clipSeconds = 3): Promise<FakeMureka> {
  const tasks = new Map<string, MurekaTask>();
  const uploads: FakeMureka['uploads'] = new Map();
  const lyricsAsked: Record<string, unknown>[] = [];
  const endings = new Map<string, FakeMureka['ending']>();
  const files = new Map<string, { type: string; bytes: Buffer }>();
  const knobs = fakeDefaults();
  const authFailures: string[] = [];
  const state: { ending: FakeMureka['ending']; quotaExceeded: number; lyricsRefusal?: FakeMureka['lyricsRefusal'] } = { ending: { kind: 'success' }, quotaExceeded: 0 };
  const choiceIds = new Set<string>();
  let base = '';
  let serial = 1_436_210;
  const trace = () => (serial++).toString(16).padStart(32, '0');
  const error = (res: Parameters<typeof sendJson>[0], status: number, message: string) => sendJson(res, status, { error: { message }, trace_id: trace() });

  /** The task as its query answers it. */
  const taskAnswer = (id: string) => {
    const task = tasks.get(id)!;
    const ending = endings.get(id)!;
    const done = task.polls >= knobs.pollsUntilDone && ending.kind !== 'never';
    const status = !done ? (task.polls <= 1 ? 'queued' : 'running') : ending.kind === 'success' ? 'succeeded' : ending.kind === 'failed' ? 'failed' : 'timeouted';
    const choices =
      status === 'succeeded'
        ? Array.from({ length: task.n }, (_, index) => {
            const choiceId = `${id}${index}`;
            choiceIds.add(choiceId);
            const lyrics = typeof task.body.lyrics === 'string' ? task.body.lyrics : null;
            return {
              index,
              id: choiceId,
              url: `${base}/cdn/${choiceId}.mp3`,
              flac_url: `${base}/cdn/${choiceId}.flac`,
              duration: (task.source ? Math.round(Math.min(Number(task.body.extend_at), (task.sourceS ??= durationOf(task.source)) * 1000)) : 0) + clipSeconds * 1000,
              ...(task.kind !== 'instrumental' && lyrics ? { lyrics_sections: sectionsOf(lyrics, clipSeconds * 1000) } : {}),
            };
          })
        : [];
    for (const c of choices) {
      if (files.has(`${c.id}.mp3`)) continue;
      const made = testMp3(clipSeconds, 300 + 50 * (c.index + 1));
      files.set(`${c.id}.mp3`, { type: 'audio/mpeg', bytes: task.source ? continued(task.source, (task.body.extend_at as number) / 1000, made) : made });
      files.set(`${c.id}.flac`, { type: 'audio/flac', bytes: renderedOnce('flac', ['-f', 'lavfi', '-i', `sine=frequency=${300 + 50 * (c.index + 1)}:duration=${clipSeconds}`]) });
    }
    return {
      id,
      created_at: 1_712_544_000,
      finished_at: done ? 1_712_544_300 : null,
      model: task.model,
      status,
      failed_reason: ending.kind === 'failed' && done ? ending.reason : null,
      watermarked: false,
      choices: status === 'succeeded' ? choices : null,
    };
  };

  /** A new task: its answer as a create gives it. */
  const created = (kind: MurekaTask['kind'], body: Record<string, unknown>, model: string, n: number, source?: Buffer) => {
    const id = String(serial++);
    tasks.set(id, { kind, body, polls: 0, model, n, ...(source ? { source } : {}) });
    endings.set(id, state.ending);
    return { id, created_at: 1_712_544_000, model, status: 'preparing', trace_id: trace() };
  };

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/cdn\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && file && files.has(file[1])) return sendBytes(res, files.get(file[1])!.type, files.get(file[1])!.bytes);
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return error(res, 401, 'Invalid Authentication');
    }
    const creating = req.method === 'POST' && /^\/v1\/(song\/(generate|extend)|instrumental\/generate)$/.test(url.pathname);
    if (creating && knobs.createBusy > 0) {
      knobs.createBusy--;
      return error(res, 429, 'Rate limit reached for requests');
    }
    if (creating && state.quotaExceeded > 0) {
      state.quotaExceeded--;
      return error(res, 429, 'You exceeded your current quota, please check your billing details');
    }
    if (req.method === 'GET' && url.pathname === '/v1/account/billing') {
      return sendJson(res, 200, { account_id: 7, balance: 12_000, total_recharge: 20_000, total_spending: 8000, concurrent_request_limit: 5 });
    }
    if (req.method === 'POST' && url.pathname === '/v1/files/upload') {
      if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return error(res, 400, 'the request must be multipart/form-data');
      const form = await new Request('http://x', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: req.body }).formData();
      const purpose = form.get('purpose');
      const upload = form.get('file');
      if (typeof purpose !== 'string' || !PURPOSES.includes(purpose)) return error(res, 400, `purpose must be one of ${PURPOSES.join(', ')}`);
      if (!(upload instanceof File)) return error(res, 400, 'file is required');
      const bytes = Buffer.from(await upload.arrayBuffer());
      if (bytes.length > 10 * 1024 * 1024) return error(res, 400, 'file is larger than 10 MB');
      if (!isMp3(bytes) && !isM4a(bytes)) return error(res, 400, 'unsupported file format: mp3 or m4a');
      const id = String(serial++);
      uploads.set(id, { purpose, filename: upload.name, type: upload.type, bytes });
      return sendJson(res, 200, { id, bytes: bytes.length, created_at: 1_712_544_000, filename: upload.name, purpose });
    }
    let body: Record<string, unknown> = {};
    if (req.method === 'POST') {
      try {
        body = JSON.parse(req.body.toString()) as Record<string, unknown>;
      } catch {
        return error(res, 400, 'the body is not JSON');
      }
    }
    if (req.method === 'POST' && url.pathname === '/v1/lyrics/generate') {
      if (typeof body.prompt !== 'string' || !body.prompt.trim()) return error(res, 400, 'prompt is required');
      lyricsAsked.push(body);
      if (state.lyricsRefusal) {
        const refusal = state.lyricsRefusal;
        state.lyricsRefusal = undefined;
        return error(res, refusal.status, refusal.message);
      }
      return sendJson(res, 200, { title: 'Embrace of Night', lyrics: `[Verse]\nIn the shadows of ${body.prompt}\nUnder moonlight so bright\n[Chorus]\nThe darkness holds us close` });
    }
    const n = body.n ?? 2;
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 3) return error(res, 400, 'n must be an integer from 1 to 3');
    const model = body.model ?? 'auto';
    const resolved = (m: unknown) => (m === 'auto' ? 'mureka-8' : String(m));
    if (req.method === 'POST' && url.pathname === '/v1/song/generate') {
      if (typeof body.lyrics !== 'string' || !body.lyrics) return error(res, 400, 'lyrics is required');
      if (body.lyrics.length > 3000) return error(res, 400, 'lyrics must be at most 3000 characters');
      if (!SONG_MODELS.includes(String(model))) return error(res, 400, `model must be one of ${SONG_MODELS.join(', ')}`);
      if (body.prompt !== undefined && (typeof body.prompt !== 'string' || body.prompt.length > 1024)) return error(res, 400, 'prompt must be a string of at most 1024 characters');
      return sendJson(res, 200, created('song', body, resolved(model), n as number));
    }
    if (req.method === 'POST' && url.pathname === '/v1/instrumental/generate') {
      if (!INSTRUMENTAL_MODELS.includes(String(model))) return error(res, 400, `model must be one of ${INSTRUMENTAL_MODELS.join(', ')}`);
      if ((body.prompt === undefined) === (body.instrumental_id === undefined)) return error(res, 400, 'one of prompt or instrumental_id is required');
      if (body.prompt !== undefined && (typeof body.prompt !== 'string' || body.prompt.length > 1024)) return error(res, 400, 'prompt must be a string of at most 1024 characters');
      return sendJson(res, 200, created('instrumental', body, resolved(model), n as number));
    }
    if (req.method === 'POST' && url.pathname === '/v1/song/extend') {
      if ((body.song_id === undefined) === (body.upload_audio_id === undefined)) return error(res, 400, 'one of song_id or upload_audio_id is required');
      if (body.song_id !== undefined && !choiceIds.has(String(body.song_id))) return error(res, 400, 'song_id: no such song');
      if (body.upload_audio_id !== undefined && uploads.get(String(body.upload_audio_id))?.purpose !== 'audio') return error(res, 400, 'upload_audio_id: no such audio upload');
      if (!Number.isInteger(body.extend_at) || (body.extend_at as number) < 8000 || (body.extend_at as number) > 420_000) return error(res, 400, 'extend_at must be an integer from 8000 to 420000');
      if (body.lyrics !== undefined && typeof body.lyrics !== 'string') return error(res, 400, 'lyrics must be a string');
      const source = body.song_id !== undefined ? files.get(`${String(body.song_id)}.mp3`)!.bytes : uploads.get(String(body.upload_audio_id))!.bytes;
      return sendJson(res, 200, created('extend', body, 'mureka-8', 2, source));
    }
    const query = /^\/v1\/(song|instrumental)\/query\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && query) {
      const task = tasks.get(query[2]);
      if (!task || (query[1] === 'instrumental') !== (task.kind === 'instrumental')) return error(res, 404, 'task not found');
      if (knobs.queryErrors > 0) {
        knobs.queryErrors--;
        return error(res, 500, 'The server had an error while processing your request');
      }
      task.polls++;
      return sendJson(res, 200, taskAnswer(query[2]));
    }
    error(res, 404, 'not found');
  });
  base = server.url;
  return {
    server,
    url: server.url,
    knobs,
    created: new Map(),
    tasks,
    uploads,
    lyricsAsked,
    authFailures,
    get ending() {
      return state.ending;
    },
    set ending(value) {
      state.ending = value;
    },
    get lyricsRefusal() {
      return state.lyricsRefusal;
    },
    set lyricsRefusal(value) {
      state.lyricsRefusal = value;
    },
    get quotaExceeded() {
      return state.quotaExceeded;
    },
    set quotaExceeded(value) {
      state.quotaExceeded = value;
    },
    close: () => server.close(),
  };
}

/** An MP3's first bytes: an ID3 tag or an MPEG audio frame's sync. */
function isMp3(bytes: Buffer): boolean {
  return bytes.toString('latin1', 0, 3) === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0);
}

/** An M4A's `ftyp` box. */
function isM4a(bytes: Buffer): boolean {
  return bytes.toString('latin1', 4, 8) === 'ftyp';
}

/** Lyrics as a take's `lyrics_sections`: its [Section] tags, its lines spread over the song, each word timed within its line. */
function sectionsOf(lyrics: string, durationMs: number) {
  const sections: { section_type: string; lines: string[] }[] = [];
  for (const raw of lyrics.split('\n')) {
    const line = raw.trim();
    const tag = /^\[(.+)\]$/.exec(line);
    if (tag) sections.push({ section_type: tag[1].toLowerCase().replace(/\s+\d+$/, '').replace(/\s+/g, '-'), lines: [] });
    else if (line) (sections.at(-1) ?? (sections.push({ section_type: 'verse', lines: [] }), sections[0])).lines.push(line);
  }
  const count = sections.reduce((sum, s) => sum + s.lines.length, 0) || 1;
  const step = Math.floor(durationMs / count);
  let at = 0;
  return sections.map((s) => {
    const start = at;
    const lines = s.lines.map((text) => {
      const words = text.split(/\s+/);
      const wordStep = Math.floor(step / words.length);
      const line = { start: at, end: at + step, text, words: words.map((word, i) => ({ start: at + i * wordStep, end: at + (i + 1) * wordStep, text: word })) };
      at += step;
      return line;
    });
    return { section_type: s.section_type, start, end: at, lines };
  });
}

/** How long a clip lasts (s), by ffmpeg's report of it. */
function durationOf(clip: Buffer): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'mureka-fake-'));
  try {
    writeFileSync(path.join(dir, 'clip'), clip);
    const report = spawnSync(ffmpegBinary().path, ['-hide_banner', '-nostdin', '-i', path.join(dir, 'clip'), '-f', 'null', '-']).stderr.toString();
    const times = [...report.matchAll(/time=(\d+):(\d+):(\d+(?:\.\d+)?)/g)].at(-1);
    return times ? Number(times[1]) * 3600 + Number(times[2]) * 60 + Number(times[3]) : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
