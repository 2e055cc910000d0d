import type { ServerResponse } from 'node:http';
import type { FakeVideoVendor } from '../video-fake.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { sizedMp4 as clip } from '../../media.js';
import { speechLike } from '../speech-audio.js';

/** What each MiniMax model makes, from its video generation pages: durations per resolution, and its frames. */
const MINIMAX_MODELS: Record<string, { at: Record<string, number[]>; text: boolean; image: boolean; last: boolean; defaultResolution: string }> = {
  'MiniMax-Hailuo-2.3': { at: { '768P': [6, 10], '1080P': [6] }, text: true, image: true, last: false, defaultResolution: '768P' },
  'MiniMax-Hailuo-2.3-Fast': { at: { '768P': [6, 10], '1080P': [6] }, text: false, image: true, last: false, defaultResolution: '768P' },
  'MiniMax-Hailuo-02': { at: { '512P': [6, 10], '768P': [6, 10], '1080P': [6] }, text: true, image: true, last: true, defaultResolution: '768P' },
  'T2V-01': { at: { '720P': [6] }, text: true, image: false, last: false, defaultResolution: '720P' },
  'T2V-01-Director': { at: { '720P': [6] }, text: true, image: false, last: false, defaultResolution: '720P' },
  'I2V-01': { at: { '720P': [6] }, text: false, image: true, last: false, defaultResolution: '720P' },
  'I2V-01-Director': { at: { '720P': [6] }, text: false, image: true, last: false, defaultResolution: '720P' },
};
const MINIMAX_SIZES: Record<string, string> = { '512P': '912x512', '720P': '1280x720', '768P': '1366x768', '1080P': '1920x1080' };

/** Its music models (Music Generation reference): the two text-to-music ones, and the two that cover a reference recording. */
const MUSIC_MODELS = new Set(['music-2.6', 'music-2.6-free']);
const COVER_MODELS = new Set(['music-cover', 'music-cover-free']);
const SAMPLE_RATES = [16_000, 24_000, 32_000, 44_100];
const BITRATES = [32_000, 64_000, 128_000, 256_000];
const AUDIO_FORMATS = ['mp3', 'wav', 'pcm'] as const;

/** A music generation or lyrics generation it received: its body as sent, the HTTP status and the base_resp code it answered (200 and 0: made). */
export interface MinimaxMusicCall {
  path: '/v1/music_generation' | '/v1/lyrics_generation';
  body: Record<string, unknown>;
  status: number;
  code: number;
}

/** MiniMax's fake: its knobs besides the shared ones. */
export interface FakeMinimax extends FakeVideoVendor {
  /**
   * `busy`: creates (video or music) answered base_resp 1002 (rate limit) before one is taken; `noCredit`: every
   * create answered 1008. Music's own: `musicFail` answers the next music generations with that base_resp (1026
   * input sensitive, 1027 output sensitive, 1024 internal error, …); `musicHttp` with that HTTP status (a 5xx);
   * `musicSeconds` makes every song that long (else about 2 s a line of lyrics, 6 to 30 s; 12 s instrumental).
   * Lyrics' own: `lyricsFail` answers the next lyrics generation with that base_resp (1026, 1027, 1024, …), once;
   * `lyricsHttp` answers them with that HTTP status (a 5xx) while set.
   */
  minimaxKnobs: { busy: number; noCredit: boolean; musicFail?: { code: number; message: string; times?: number }; musicHttp?: number; musicSeconds?: number; lyricsFail?: { code: number; message: string }; lyricsHttp?: number };
  /** The music and lyrics generations received, in order. */
  musicCalls: MinimaxMusicCall[];
}

/**
 * MiniMax's video API from its documentation (platform.minimax.io): POST /v1/video_generation, GET
 * /v1/query/video_generation?task_id= (Preparing → Processing → Success | Fail, `file_id` on success), GET
 * /v1/files/retrieve?file_id= (`file.download_url`), GET /v1/files/list; a Bearer key; every refusal under
 * HTTP 200 as `base_resp.status_code` (1004 not authorized, 2013 invalid parameters, 1002 rate limit, 1008
 * insufficient balance). Task ids are digit strings, as MiniMax's.
 * Its music API as its Music Generation and Lyrics Generation references give it: POST /v1/music_generation
 * (synchronous: a real song in `data.audio`, hex or a link, with `extra_info`) and POST /v1/lyrics_generation
 * (`write_full_song` or `edit`: lyrics with section tags written from templates, a title and style tags).
 */
export async function startFakeMinimax(apiKey: string): Promise<FakeMinimax> {
  const created: FakeVideoVendor['created'] = new Map();
  const files = new Map<string, string>();
  const songs = new Map<string, Buffer>();
  const musicCalls: MinimaxMusicCall[] = [];
  const authFailures: string[] = [];
  const knobs: FakeVideoVendor['knobs'] = { pollsUntilDone: 1 };
  const minimaxKnobs: FakeMinimax['minimaxKnobs'] = { busy: 0, noCredit: false };
  const ok = { status_code: 0, status_msg: 'success' };
  const answer = (res: ServerResponse, body: Record<string, unknown>) => sendJson(res, 200, body);
  const refuse = (res: ServerResponse, code: number, message: string) => answer(res, { base_resp: { status_code: code, status_msg: message } });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)\.mp4$/.exec(url.pathname);
    if (file && created.has(file[1])) return sendBytes(res, 'video/mp4', clip(created.get(file[1])!.size, created.get(file[1])!.seconds));
    // a song's link (`output_format: url`), as its CDN serves it: no key
    const song = /^\/music\/(\d+)\.(mp3|wav|pcm)$/.exec(url.pathname);
    if (req.method === 'GET' && song && songs.has(song[1])) return sendBytes(res, song[2] === 'mp3' ? 'audio/mpeg' : song[2] === 'wav' ? 'audio/wav' : 'application/octet-stream', songs.get(song[1])!);
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(String(req.headers.authorization ?? ''));
      return refuse(res, 1004, 'login fail: Please carry the API secret key in the Authorization field of the request header');
    }
    if (req.method === 'GET' && url.pathname === '/v1/files/list') return answer(res, { files: [], base_resp: ok });
    if (req.method === 'GET' && url.pathname === '/v1/query/video_generation') {
      const id = url.searchParams.get('task_id') ?? '';
      const task = created.get(id);
      if (!task) return refuse(res, 2013, 'invalid params, task_id not found');
      task.polls++;
      if (task.polls < knobs.pollsUntilDone) return answer(res, { task_id: id, status: task.polls === 0 ? 'Preparing' : 'Processing', file_id: '', base_resp: ok });
      if (knobs.failWith) return answer(res, { task_id: id, status: 'Fail', file_id: '', base_resp: { status_code: knobs.failCode ? Number(knobs.failCode) : 1000, status_msg: knobs.failWith } });
      const [width, height] = task.size.split('x').map(Number);
      files.set(`${id}0`, id);
      return answer(res, { task_id: id, status: 'Success', file_id: `${id}0`, video_width: width, video_height: height, base_resp: ok });
    }
    if (req.method === 'GET' && url.pathname === '/v1/files/retrieve') {
      const fileId = url.searchParams.get('file_id') ?? '';
      const id = files.get(fileId);
      if (!id) return refuse(res, 2013, 'invalid params, file not found');
      return answer(res, { file: { file_id: Number(fileId), bytes: 0, created_at: Math.floor(Date.now() / 1000), filename: 'output_aigc.mp4', purpose: 'video_generation', download_url: `${server.url}/files/${id}.mp4` }, base_resp: ok });
    }
    if (req.method === 'POST' && url.pathname === '/v1/lyrics_generation') return lyricsGeneration(res, parsed(req.body));
    if (req.method === 'POST' && url.pathname === '/v1/music_generation') return musicGeneration(res, parsed(req.body));
    if (req.method !== 'POST' || url.pathname !== '/v1/video_generation') return sendJson(res, 404, { base_resp: { status_code: 404, status_msg: 'not found' } });
    fake.createRequests = (fake.createRequests ?? 0) + 1;
    if (minimaxKnobs.noCredit) return refuse(res, 1008, 'insufficient balance');
    if (minimaxKnobs.busy > 0) {
      minimaxKnobs.busy--;
      return refuse(res, 1002, 'rate limit exceeded(RPM)');
    }
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    const model = MINIMAX_MODELS[String(body.model)];
    if (!model) return refuse(res, 2013, `invalid params, model ${String(body.model)} is not supported`);
    if (typeof body.prompt === 'string' && [...body.prompt].length > 2000) return refuse(res, 2013, 'invalid params, prompt is too long');
    const image = body.first_frame_image;
    if (!image && !model.text) return refuse(res, 2013, 'invalid params, first_frame_image is required');
    if (image && !model.image) return refuse(res, 2013, 'invalid params, first_frame_image is not supported by this model');
    if (body.last_frame_image !== undefined && !model.last) return refuse(res, 2013, 'invalid params, last_frame_image is not supported by this model');
    for (const field of ['first_frame_image', 'last_frame_image']) {
      const value = body[field];
      if (value !== undefined && (typeof value !== 'string' || !/^(https?:\/\/|data:image\/)/.test(value))) return refuse(res, 2013, `invalid params, ${field} must be a URL or a data URI`);
    }
    const resolution = body.resolution === undefined ? model.defaultResolution : String(body.resolution);
    const durations = model.at[resolution];
    if (!durations) return refuse(res, 2013, `invalid params, resolution ${resolution} is not supported by this model`);
    if (resolution === '512P' && !image) return refuse(res, 2013, 'invalid params, 512P is for image to video');
    const seconds = body.duration === undefined ? 6 : body.duration;
    if (typeof seconds !== 'number' || !durations.includes(seconds)) return refuse(res, 2013, `invalid params, duration ${String(seconds)} is not supported at ${resolution}`);
    const taskId = String(106_916_112_212_032 + created.size);
    created.set(taskId, { path: 'video_generation', body, polls: 0, size: MINIMAX_SIZES[resolution], seconds });
    return answer(res, { task_id: taskId, base_resp: ok });
  });
  const fake: FakeMinimax = { server, url: server.url, created, knobs, minimaxKnobs, musicCalls, authFailures, close: () => server.close() };
  return fake;

  function parsed(body: Buffer): Record<string, unknown> {
    try {
      const json = JSON.parse(body.toString()) as unknown;
      return typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }

  /** Lyrics Generation: `mode` write_full_song (a song on `prompt`, ≤ 2000 characters; empty: one of its choosing) or edit (`lyrics`, ≤ 3500, carried on); `title` kept. */
  function lyricsGeneration(res: ServerResponse, body: Record<string, unknown>): void {
    const called = (code: number) => musicCalls.push({ path: '/v1/lyrics_generation', body, status: 200, code });
    const bad = (words: string) => (called(2013), refuse(res, 2013, `invalid params, ${words}`));
    if (body.mode !== 'write_full_song' && body.mode !== 'edit') return bad('mode must be write_full_song or edit');
    for (const [field, max] of [['prompt', 2000], ['lyrics', 3500], ['title', 200]] as const) {
      if (body[field] !== undefined && typeof body[field] !== 'string') return bad(`${field} must be a string`);
      if (typeof body[field] === 'string' && chars(body[field]) > max) return bad(`${field} is longer than ${max} characters`);
    }
    if (body.mode === 'edit' && !String(body.lyrics ?? '').trim()) return bad('lyrics is required in edit mode');
    if (minimaxKnobs.noCredit) return (called(1008), refuse(res, 1008, 'insufficient balance'));
    const fail = minimaxKnobs.lyricsFail;
    if (fail) {
      minimaxKnobs.lyricsFail = undefined;
      return (called(fail.code), refuse(res, fail.code, fail.message));
    }
    if (minimaxKnobs.lyricsHttp) return (musicCalls.push({ path: '/v1/lyrics_generation', body, status: minimaxKnobs.lyricsHttp, code: 1000 }), sendJson(res, minimaxKnobs.lyricsHttp, { base_resp: { status_code: 1000, status_msg: 'unknown error' } }));
    const theme = String(body.prompt ?? '').trim() || 'a walk under the city lights';
    const title = typeof body.title === 'string' && body.title.trim() ? body.title : titleOf(theme);
    const lyrics =
      body.mode === 'edit'
        ? `${String(body.lyrics).trimEnd()}\n\n[Outro]\nAnd so the song of ${theme} ends`
        : `[Intro]\n(Ooh-ooh)\n\n[Verse]\nI sing of ${theme}\nEvery word a step along the way\n\n[Chorus]\nOh, ${theme}\nStay with me tonight\n\n[Outro]\n(Ooh-ooh)`;
    called(0);
    answer(res, { song_title: title, style_tags: 'Pop, Upbeat, Female Vocals', lyrics, base_resp: ok });
  }

  /**
   * Music Generation: music-2.6 and music-2.6-free take `prompt` (≤ 2000; 1–2000 and required with
   * `is_instrumental`) and `lyrics` (1–3500, required unless instrumental or `lyrics_optimizer` with none); the
   * cover models need a reference recording (`audio_url`, `audio_base64` or `cover_feature_id`), a prompt of
   * 10–300 and lyrics of 10–1000 where given. `audio_setting` {sample_rate, bitrate, format mp3|wav|pcm},
   * `output_format` hex (the default) or url (links under /music/ here). The song is real audio of that format.
   */
  async function musicGeneration(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    const called = (code: number, status = 200) => musicCalls.push({ path: '/v1/music_generation', body, status, code });
    const bad = (words: string) => (called(2013), refuse(res, 2013, `invalid params, ${words}`));
    fake.createRequests = (fake.createRequests ?? 0) + 1;
    if (minimaxKnobs.noCredit) return (called(1008), refuse(res, 1008, 'insufficient balance'));
    if (minimaxKnobs.busy > 0) {
      minimaxKnobs.busy--;
      return (called(1002), refuse(res, 1002, 'rate limit exceeded(RPM)'));
    }
    const model = String(body.model ?? '');
    const cover = COVER_MODELS.has(model);
    if (!MUSIC_MODELS.has(model) && !cover) return bad(`model ${model || '(none)'} is not supported`);
    for (const field of ['prompt', 'lyrics']) if (body[field] !== undefined && typeof body[field] !== 'string') return bad(`${field} must be a string`);
    const prompt = typeof body.prompt === 'string' ? body.prompt : '';
    const lyrics = typeof body.lyrics === 'string' ? body.lyrics : '';
    const instrumental = body.is_instrumental === true;
    if (body.is_instrumental !== undefined && typeof body.is_instrumental !== 'boolean') return bad('is_instrumental must be a boolean');
    if (cover) {
      if (!body.audio_url && !body.audio_base64 && !body.cover_feature_id) return bad('audio_url, audio_base64 or cover_feature_id is required for music-cover');
      if (chars(prompt) < 10 || chars(prompt) > 300) return bad('prompt must be 10-300 characters for music-cover');
      if (lyrics && (chars(lyrics) < 10 || chars(lyrics) > 1000)) return bad('lyrics must be 10-1000 characters for music-cover');
    } else {
      if (chars(prompt) > 2000) return bad('prompt is longer than 2000 characters');
      if (instrumental && !prompt.trim()) return bad('prompt is required when is_instrumental is true');
      if (!instrumental && !lyrics.trim() && body.lyrics_optimizer !== true) return bad('lyrics is required');
      if (!instrumental && chars(lyrics) > 3500) return bad('lyrics is longer than 3500 characters');
    }
    const outputFormat = body.output_format ?? 'hex';
    if (outputFormat !== 'hex' && outputFormat !== 'url') return bad('output_format must be url or hex');
    if (body.stream === true) return bad(outputFormat === 'url' ? 'only hex is supported when stream is true' : 'stream is not served by this fake');
    const setting = (typeof body.audio_setting === 'object' && body.audio_setting !== null ? body.audio_setting : {}) as Record<string, unknown>;
    const sampleRate = setting.sample_rate ?? 44_100;
    const bitrate = setting.bitrate ?? 256_000;
    const format = setting.format ?? 'mp3';
    if (!SAMPLE_RATES.includes(sampleRate as number)) return bad(`audio_setting.sample_rate ${String(sampleRate)} is not supported`);
    if (!BITRATES.includes(bitrate as number)) return bad(`audio_setting.bitrate ${String(bitrate)} is not supported`);
    if (!(AUDIO_FORMATS as readonly unknown[]).includes(format)) return bad(`audio_setting.format ${String(format)} is not supported`);
    const fail = minimaxKnobs.musicFail;
    if (fail) {
      if (fail.times === undefined || --fail.times <= 0) minimaxKnobs.musicFail = undefined;
      return (called(fail.code), refuse(res, fail.code, fail.message));
    }
    if (minimaxKnobs.musicHttp) return (called(1000, minimaxKnobs.musicHttp), sendJson(res, minimaxKnobs.musicHttp, { base_resp: { status_code: 1000, status_msg: 'unknown error' } }));
    const lines = lyrics.split('\n').filter((line) => line.trim() && !/^\s*\[[^\]]*\]\s*$/.test(line)).length;
    const seconds = minimaxKnobs.musicSeconds ?? (instrumental ? 12 : Math.min(30, Math.max(6, lines * 2)));
    const audio = await speechLike(format as (typeof AUDIO_FORMATS)[number], seconds, sampleRate as number, (bitrate as number) / 1000);
    const id = String(songs.size + 1);
    songs.set(id, audio);
    called(0);
    answer(res, {
      data: { audio: outputFormat === 'url' ? `${server.url}/music/${id}.${String(format)}` : audio.toString('hex'), status: 2 },
      trace_id: `04ede0ab069fb1ba8be5156a24b1e${id.padStart(3, '0')}`,
      extra_info: { music_duration: Math.round(seconds * 1000), music_sample_rate: sampleRate, music_channel: 1, bitrate, music_size: audio.length },
      analysis_info: null,
      base_resp: ok,
    });
  }
}

/** Characters as MiniMax counts them. */
function chars(text: string): number {
  return [...text].length;
}

/** A title from a theme: its first words, capitalized. */
function titleOf(theme: string): string {
  return theme
    .split(/\s+/)
    .slice(0, 4)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
