import { png } from '../../images.js';
import { continued } from '../continued-song.js';
import { testMp3 } from '../../media.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { callBack, type VendorCallback } from '../../vendor-callback.js';
import { fakeDefaults, type FakeUpstream } from '../../fake-upstreams.js';
import {
  type SunoapiStage,
  type SunoapiState,
  type SunoapiTrack,
  sunoapiAnswer,
  sunoapiCreated,
  sunoapiCredits,
  sunoapiErrorCallback,
  type SunoapiLyricsState,
  type SunoapiLyricsVersion,
  sunoapiLyricsCallback,
  sunoapiLyricsErrorCallback,
  sunoapiLyricsRecordInfo,
  sunoapiRecordInfo,
  sunoapiStageCallback,
} from './sunoapi-bodies.js';

/** The limits each model takes, as docs.sunoapi.org lists them: custom mode's prompt, style and title. */
export const SUNOAPI_LIMITS: Readonly<Record<string, { prompt: number; style: number; title: number }>> = {
  V3_5: { prompt: 3000, style: 200, title: 80 },
  V4: { prompt: 3000, style: 200, title: 80 },
  V4_5: { prompt: 5000, style: 1000, title: 100 },
  V4_5PLUS: { prompt: 5000, style: 1000, title: 100 },
  V4_5ALL: { prompt: 5000, style: 1000, title: 80 },
  V5: { prompt: 5000, style: 1000, title: 100 },
  V5_5: { prompt: 5000, style: 1000, title: 100 },
};
/** Non-custom mode's prompt (a description). */
export const SUNOAPI_DESCRIPTION_MAX = 500;
/** Suno's own names of the models, as the takes' modelName says them. */
const SUNO_NAMES: Readonly<Record<string, string>> = { V3_5: 'chirp-v3-5', V4: 'chirp-v4', V4_5: 'chirp-auk', V4_5PLUS: 'chirp-bluejay', V4_5ALL: 'chirp-auk-turbo', V5: 'chirp-crow', V5_5: 'chirp-fenix' };

/** How a task ends: SUCCESS (default), a failed state with its code and words, SUCCESS's takes reported as CALLBACK_EXCEPTION, or never. */
export type SunoapiEnding =
  | { kind: 'success' }
  | { kind: 'failure'; status: Extract<SunoapiState, 'CREATE_TASK_FAILED' | 'GENERATE_AUDIO_FAILED' | 'SENSITIVE_WORD_ERROR'>; errorCode: number; errorMessage: string }
  | { kind: 'callback_exception' }
  | { kind: 'never' };

/** Its lyrics route's prompt limit ("200字"). */
export const SUNOAPI_LYRICS_PROMPT_MAX = 200;

/** How a lyrics task ends: SUCCESS with two versions (default), a failed state with its code and words, or never. */
export type SunoapiLyricsEnding =
  | { kind: 'success' }
  | { kind: 'failure'; status: Extract<SunoapiLyricsState, 'CREATE_TASK_FAILED' | 'GENERATE_LYRICS_FAILED' | 'SENSITIVE_WORD_ERROR'>; errorCode: number; errorMessage: string }
  | { kind: 'never' };

/** A lyrics task the fake holds: the create's body as received, its polls, how it ends, whether it was called back. */
export interface SunoapiFakeLyricsTask {
  body: Record<string, unknown>;
  polls: number;
  ending: SunoapiLyricsEnding;
  calledBack: boolean;
}

/** A task the fake holds. */
export interface SunoapiFakeTask {
  path: string;
  body: Record<string, unknown>;
  polls: number;
  ending: SunoapiEnding;
  /** Ended now by `finishMusic`, whatever the polls. */
  ended?: boolean;
  /** The stages called back so far (and `error`). */
  calledBack: (SunoapiStage | 'error')[];
  /** An upload-extend's fetch of its uploadUrl: the HTTP status and the bytes read (status null: not loopback, not fetched). */
  fetched?: { status: number | null; bytes: number; body?: Buffer };
}

export interface FakeSunoapi extends FakeUpstream {
  /** Tasks created, by taskId. */
  music: Map<string, SunoapiFakeTask>;
  /** Every callback sent (or recorded unsent: an address off loopback), in order. */
  callbacks: VendorCallback[];
  /** How the next tasks end. */
  ending: SunoapiEnding;
  /** The balance the credit route answers; creates are refused (429, insufficient credits) when it is 0. */
  credits: number;
  /** The bytes served as the audio of the next tasks' takes (null: an MP3 of a tone made for each). */
  songBytes: Buffer | null;
  /** Ends task `id` now, as its `ending` says, calling back every stage not yet called back; resolves with those callbacks once answered. */
  finishMusic(id: string): Promise<VendorCallback[]>;
  /** Lyrics tasks created (`POST /api/v1/lyrics`), by taskId. */
  lyrics: Map<string, SunoapiFakeLyricsTask>;
  /** How the next lyrics tasks end. */
  lyricsEnding: SunoapiLyricsEnding;
}

/**
 * A reseller in sunoapi.org's shape (sunoapi.org, api.box, kie.ai), from its documented bodies
 * (`sunoapi-bodies.ts`): `POST /api/v1/generate`, `/generate/extend`, `/generate/upload-extend` (checked as
 * their docs say: required fields by mode, the model's limits, callBackUrl; an upload-extend fetches its
 * uploadUrl), each answering `{code: 200, data: {taskId}}`; `GET /api/v1/generate/record-info?taskId=`
 * (PENDING, TEXT_SUCCESS, FIRST_SUCCESS over the first polls, then SUCCESS with two MP3 takes and their
 * covers, served at /files/…); `GET /api/v1/generate/credit`. Lyrics: `POST /api/v1/lyrics` (`prompt` of 200
 * characters at most, required, and callBackUrl) answering `{code: 200, data: {taskId}}`; `GET
 * /api/v1/lyrics/record-info?taskId=` (PENDING over the first polls, then SUCCESS with two versions written
 * from the prompt, or the failed state set by `lyricsEnding`), called back once at complete (or error). Each stage reached is called back to the
 * create's callBackUrl (text, first, complete; a failure's `error`). Every refusal is `{code, msg}` under HTTP 200.
 */
export async function startFakeSunoapi(apiKey: string, clipSeconds = 3): Promise<FakeSunoapi> {
  const music = new Map<string, SunoapiFakeTask>();
  const created: FakeUpstream['created'] = new Map();
  const authFailures: string[] = [];
  const knobs = fakeDefaults();
  const callbacks: VendorCallback[] = [];
  const files = new Map<string, { type: string; bytes: Buffer }>();
  const cover = await png(64, 64);
  const state: { ending: SunoapiEnding; credits: number; songBytes: Buffer | null; lyricsEnding: SunoapiLyricsEnding } = { ending: { kind: 'success' }, credits: 100, songBytes: null, lyricsEnding: { kind: 'success' } };
  const lyrics = new Map<string, SunoapiFakeLyricsTask>();
  /** A lyrics task's two versions, written from its prompt. */
  const versionsOf = (task: SunoapiFakeLyricsTask): SunoapiLyricsVersion[] => {
    const theme = String(task.body.prompt);
    const title = theme.split(/\s+/).slice(0, 3).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
    return [
      { text: `[Verse]\nWalking through ${theme}\nEvery step a line of light\n\n[Chorus]\nOh, ${theme}\nStay with me tonight`, title, status: 'complete', errorMessage: '' },
      { text: `[Verse]\nWind is calling ${theme}\nSteel and silver in the night\n\n[Chorus]\nSing of ${theme}\nHold the morning light`, title, status: 'complete', errorMessage: '' },
    ];
  };
  /** The lyrics task as record-info answers it: PENDING until its polls are done, then its ending; called back once ended. */
  const lyricsRecord = (id: string) => {
    const task = lyrics.get(id)!;
    const ended = task.polls >= knobs.pollsUntilDone && task.ending.kind !== 'never';
    const failed = ended && task.ending.kind === 'failure' ? task.ending : null;
    return sunoapiLyricsRecordInfo({
      taskId: id,
      param: task.body,
      status: !ended ? 'PENDING' : failed ? failed.status : 'SUCCESS',
      versions: ended && !failed ? versionsOf(task) : [],
      errorCode: failed ? failed.errorCode : null,
      errorMessage: failed ? failed.errorMessage : null,
    });
  };
  const callBackLyrics = async (id: string): Promise<void> => {
    const task = lyrics.get(id)!;
    if (task.calledBack || task.polls < knobs.pollsUntilDone || task.ending.kind === 'never') return;
    task.calledBack = true;
    const ending = task.ending;
    const body = ending.kind === 'failure' ? sunoapiLyricsErrorCallback(id, 400, ending.errorMessage) : sunoapiLyricsCallback(id, versionsOf(task));
    await callBack(task.body.callBackUrl, body, callbacks);
  };
  let base = '';

  /** The task's two takes, as far as `reached` has made them (1: lyrics written, 2: the first take made, 3: both). */
  const tracksOf = (id: string, reached: number): SunoapiTrack[] => {
    const task = music.get(id)!;
    const b = task.body;
    const source = typeof b.audioId === 'string' ? findTrack(b.audioId) : undefined;
    const custom = b.customMode === true || b.defaultParamFlag === true;
    const instrumental = b.instrumental === true;
    const lyrics = instrumental ? '' : custom ? String(b.prompt ?? '') : source && b.defaultParamFlag === false ? source.prompt : `[Verse]\n${String(b.prompt ?? 'a song')}`;
    return [0, 1].map((n) => {
      const made = reached >= 3 || (reached === 2 && n === 0);
      return {
        id: `${id}-take-${n}`,
        audioUrl: made ? `${base}/files/${id}-${n}.mp3` : '',
        streamAudioUrl: reached >= 2 ? `${base}/files/${id}-${n}.mp3` : '',
        imageUrl: made ? `${base}/files/${id}.png` : '',
        prompt: lyrics,
        modelName: SUNO_NAMES[String(b.model)] ?? String(b.model),
        title: custom && typeof b.title === 'string' ? b.title : (source?.title ?? 'Untitled'),
        tags: custom && typeof b.style === 'string' ? b.style : (source?.tags ?? ''),
        createTime: '2025-01-01 00:00:00',
        duration: made ? clipSeconds : null,
      };
    });
  };
  const findTrack = (trackId: string): SunoapiTrack | undefined => {
    const taskId = /^(.+)-take-[01]$/.exec(trackId)?.[1];
    return taskId && music.has(taskId) ? tracksOf(taskId, 3)[Number(trackId.slice(-1))] : undefined;
  };
  /** How far the task is: 0 pending, 1 text, 2 first, 3 ended. */
  const reachedOf = (task: SunoapiFakeTask) => (task.ended || (task.polls >= knobs.pollsUntilDone && task.ending.kind !== 'never') ? 3 : Math.min(Math.max(task.polls - 1, 0), 2));
  const record = (id: string) => {
    const task = music.get(id)!;
    const reached = reachedOf(task);
    const ending = task.ending;
    const failed = reached === 3 && ending.kind === 'failure';
    const status: SunoapiState = failed ? ending.status : reached === 3 ? (ending.kind === 'callback_exception' ? 'CALLBACK_EXCEPTION' : 'SUCCESS') : (['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS'] as const)[reached];
    return sunoapiRecordInfo({
      taskId: id,
      param: task.body,
      status,
      type: task.path.endsWith('/upload-extend') ? 'UPLOAD_EXTEND' : task.path.endsWith('/extend') ? 'EXTEND' : 'GENERATE',
      parentMusicId: typeof task.body.audioId === 'string' ? task.body.audioId : '',
      tracks: failed || reached === 0 ? [] : tracksOf(id, reached),
      errorCode: failed ? ending.errorCode : null,
      errorMessage: failed ? ending.errorMessage : null,
    });
  };
  /** The callbacks of the stages the task has reached and not yet called back, in order. */
  const callBackReached = async (id: string): Promise<VendorCallback[]> => {
    const task = music.get(id)!;
    const reached = reachedOf(task);
    const due: [SunoapiStage | 'error', unknown][] = [];
    const ending = task.ending;
    if (reached === 3 && ending.kind === 'failure') due.push(['error', sunoapiErrorCallback(id, ending.errorCode, ending.errorMessage)]);
    else
      (['text', 'first', 'complete'] as const).forEach((stage, i) => {
        if (reached >= i + 1) due.push([stage, sunoapiStageCallback(stage, id, stage === 'first' ? tracksOf(id, 2).slice(0, 1) : tracksOf(id, 3))]);
      });
    const sent: VendorCallback[] = [];
    for (const [stage, body] of due) {
      if (task.calledBack.includes(stage)) continue;
      task.calledBack.push(stage);
      const entry = await callBack(task.body.callBackUrl, body, callbacks);
      if (entry) sent.push(entry);
    }
    return sent;
  };

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && file && files.has(file[1])) return sendBytes(res, files.get(file[1])!.type, files.get(file[1])!.bytes);
    const refuse = (code: number, msg: string) => sendJson(res, 200, sunoapiAnswer(code, msg));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return refuse(401, 'You do not have access permissions');
    }
    if (req.method === 'GET' && url.pathname === '/api/v1/generate/credit') return sendJson(res, 200, sunoapiCredits(state.credits));
    if (req.method === 'GET' && url.pathname === '/api/v1/generate/record-info') {
      const id = url.searchParams.get('taskId');
      if (!id) return refuse(400, 'taskId is required');
      const task = music.get(id);
      if (!task) return refuse(400, 'The task does not exist');
      if (knobs.queryErrors > 0) {
        knobs.queryErrors--;
        return refuse(500, 'Server exception, please try again later');
      }
      task.polls++;
      sendJson(res, 200, record(id));
      void callBackReached(id);
      return;
    }
    if (req.method === 'GET' && url.pathname === '/api/v1/lyrics/record-info') {
      const id = url.searchParams.get('taskId');
      if (!id) return refuse(400, 'taskId is required');
      const task = lyrics.get(id);
      if (!task) return refuse(400, 'The task does not exist');
      if (knobs.queryErrors > 0) {
        knobs.queryErrors--;
        return refuse(500, 'Server exception, please try again later');
      }
      task.polls++;
      sendJson(res, 200, lyricsRecord(id));
      void callBackLyrics(id);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/api/v1/lyrics') {
      if (knobs.createRefusal) return sendJson(res, knobs.createRefusal.status, knobs.createRefusal.body);
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        return refuse(430, 'Your call frequency is too high. Please try again later.');
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(req.body.toString()) as Record<string, unknown>;
      } catch {
        return refuse(400, 'The request body is not JSON');
      }
      if (typeof body.prompt !== 'string' || !body.prompt.trim()) return refuse(400, 'prompt is required');
      if ([...body.prompt].length > SUNOAPI_LYRICS_PROMPT_MAX) return refuse(413, 'Theme or prompt too long');
      if (typeof body.callBackUrl !== 'string' || !body.callBackUrl.trim()) return refuse(400, 'Please enter callBackUrl.');
      if (state.credits <= 0) return refuse(429, 'The current credits are insufficient. Please top up.');
      const id = `sl${(lyrics.size + 1).toString(16).padStart(6, '0')}task`;
      lyrics.set(id, { body, polls: 0, ending: state.lyricsEnding, calledBack: false });
      return sendJson(res, 200, sunoapiCreated(id));
    }
    const create = ['/api/v1/generate', '/api/v1/generate/extend', '/api/v1/generate/upload-extend'].includes(url.pathname);
    if (req.method !== 'POST' || !create) return refuse(404, 'The request method or path is wrong');
    if (knobs.createRefusal) return sendJson(res, knobs.createRefusal.status, knobs.createRefusal.body);
    if (knobs.createBusy > 0) {
      knobs.createBusy--;
      return refuse(430, 'Your call frequency is too high. Please try again later.');
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    } catch {
      return refuse(400, 'The request body is not JSON');
    }
    const invalid = checkCreate(url.pathname, body, findTrack);
    if (invalid) return refuse(invalid.code, invalid.msg);
    if (state.credits <= 0) return refuse(429, 'The current credits are insufficient. Please top up.');
    const id = `sa${(music.size + 1).toString(16).padStart(6, '0')}task`;
    const task: SunoapiFakeTask = { path: url.pathname, body, polls: 0, ending: state.ending, calledBack: [] };
    if (url.pathname.endsWith('/upload-extend')) {
      task.fetched = await fetchUpload(String(body.uploadUrl));
      if (task.fetched.status !== null && (task.fetched.status !== 200 || task.fetched.bytes === 0)) return refuse(400, `Failed to fetch the audio at uploadUrl (HTTP ${task.fetched.status})`);
    }
    music.set(id, task);
    created.set(id, { body, polls: 0 });
    // an upload-extend's takes are the longer track: the upload up to continueAt (its own samples), then what it made
    const uploaded = task.fetched?.status === 200 ? task.fetched.body : undefined;
    const at = typeof body.continueAt === 'number' ? body.continueAt : undefined;
    for (const n of [0, 1]) {
      const made = state.songBytes ?? testMp3(clipSeconds, 300 + 100 * music.size + 50 * n);
      files.set(`${id}-${n}.mp3`, { type: 'audio/mpeg', bytes: uploaded && at !== undefined ? continued(uploaded, at, made) : made });
    }
    files.set(`${id}.png`, { type: 'image/png', bytes: cover });
    if (knobs.resetAfterCreate) {
      knobs.resetAfterCreate--;
      return void res.socket?.resetAndDestroy();
    }
    sendJson(res, 200, sunoapiCreated(id));
  });
  base = server.url;
  return {
    server,
    url: server.url,
    knobs,
    created,
    music,
    callbacks,
    authFailures,
    finishMusic: async (id: string) => {
      music.get(id)!.ended = true;
      return callBackReached(id);
    },
    get ending() {
      return state.ending;
    },
    set ending(value) {
      state.ending = value;
    },
    lyrics,
    get lyricsEnding() {
      return state.lyricsEnding;
    },
    set lyricsEnding(value) {
      state.lyricsEnding = value;
    },
    get credits() {
      return state.credits;
    },
    set credits(value) {
      state.credits = value;
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

/**
 * A create checked as docs.sunoapi.org states its rules: the model, callBackUrl; a new song's custom mode
 * needs style and title (and prompt, the lyrics, unless instrumental), non-custom mode a prompt of 500
 * characters at most; an extend its audioId (a take it made, by the same model) and, with defaultParamFlag,
 * prompt, style, title and continueAt; an upload-extend its uploadUrl and, with defaultParamFlag, style and
 * title (and prompt unless instrumental); lengths by the model (413). A code and words, or null when it is fine.
 */
export function checkCreate(path: string, b: Record<string, unknown>, findTrack: (id: string) => SunoapiTrack | undefined): { code: number; msg: string } | null {
  const text = (field: string) => typeof b[field] === 'string' && (b[field] as string).trim() !== '';
  const missing = (fields: string[]) => fields.find((f) => !text(f));
  const limits = SUNOAPI_LIMITS[String(b.model)];
  if (!limits) return { code: 400, msg: `model is invalid: ${String(b.model)}` };
  if (!text('callBackUrl')) return { code: 400, msg: 'Please enter callBackUrl.' };
  const lengths = (): { code: number; msg: string } | null => {
    for (const field of ['prompt', 'style', 'title'] as const) {
      if (typeof b[field] === 'string' && (b[field] as string).length > limits[field]) return { code: 413, msg: `${field} is too long: at most ${limits[field]} characters for ${String(b.model)}` };
    }
    return null;
  };
  const needs = (fields: string[]) => {
    const absent = missing(fields);
    return absent ? { code: 400, msg: `${absent} is required` } : lengths();
  };
  const vocals = b.instrumental === true ? [] : ['prompt'];
  if (path === '/api/v1/generate') {
    if (typeof b.customMode !== 'boolean') return { code: 400, msg: 'customMode is required' };
    if (typeof b.instrumental !== 'boolean') return { code: 400, msg: 'instrumental is required' };
    if (b.customMode) return needs(['style', 'title', ...vocals]);
    if (!text('prompt')) return { code: 400, msg: 'prompt is required' };
    return (b.prompt as string).length > SUNOAPI_DESCRIPTION_MAX ? { code: 413, msg: `prompt is too long: at most ${SUNOAPI_DESCRIPTION_MAX} characters in non-custom mode` } : null;
  }
  if (typeof b.defaultParamFlag !== 'boolean') return { code: 400, msg: 'defaultParamFlag is required' };
  const at = b.continueAt;
  const atOk = typeof at === 'number' && at > 0;
  if (path === '/api/v1/generate/extend') {
    if (!text('audioId')) return { code: 400, msg: 'audioId is required' };
    const source = findTrack(b.audioId as string);
    if (!source) return { code: 400, msg: 'audioId does not exist' };
    if (!b.defaultParamFlag) return null;
    if (!atOk) return { code: 400, msg: 'continueAt is required' };
    if (source.duration !== null && (at as number) >= source.duration) return { code: 400, msg: 'continueAt must be less than the audio duration' };
    return needs(['prompt', 'style', 'title']);
  }
  if (!text('uploadUrl')) return { code: 400, msg: 'uploadUrl is required' };
  if (!b.defaultParamFlag) return null;
  if (at !== undefined && !atOk) return { code: 400, msg: 'continueAt must be greater than 0' };
  return needs(['style', 'title', ...vocals]);
}

/** The upload at `url`, fetched as the vendor fetches it (a fake never leaves loopback: elsewhere, not fetched). */
async function fetchUpload(url: string): Promise<{ status: number | null; bytes: number; body?: Buffer }> {
  if (!URL.canParse(url) || !['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname)) return { status: null, bytes: 0 };
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    const body = Buffer.from(await res.arrayBuffer());
    return { status: res.status, bytes: body.length, body };
  } catch {
    return { status: 0, bytes: 0 };
  }
}
