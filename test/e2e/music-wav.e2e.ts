import { MediaService } from '../../src/modules/media/media.service.js';
import { startServer, sendBytes, type TestServer } from '../support/http-server.js';
import { decodeS16, probeAudio } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

/** A 16-bit PCM WAV of `channels` channels at `rate` Hz, every sample different (a seeded noise over a tone). */
function pcm16(seconds: number, rate: number, channels: number, seed: number): { wav: Buffer; samples: Buffer } {
  const frames = Math.round(seconds * rate);
  const samples = Buffer.alloc(frames * channels * 2);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < frames * channels; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const tone = 0.4 * Math.sin((2 * Math.PI * 330 * Math.floor(i / channels)) / rate);
    samples.writeInt16LE(Math.round((tone + ((x >>> 0) / 0xffffffff - 0.5) * 0.2) * 30000), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length, 40);
  return { wav: Buffer.concat([header, samples]), samples };
}

/** The format and data of a WAV, from its chunks (the sizes its header gives, checked against the file). */
function readWav(wav: Buffer): { tag: number; channels: number; rate: number; bits: number; data: Buffer } {
  expect([wav.toString('latin1', 0, 4), wav.toString('latin1', 8, 12), wav.readUInt32LE(4)]).toEqual(['RIFF', 'WAVE', wav.length - 8]);
  let fmt: { tag: number; channels: number; rate: number; bits: number } | undefined;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === 'fmt ') fmt = { tag: wav.readUInt16LE(at + 8), channels: wav.readUInt16LE(at + 10), rate: wav.readUInt32LE(at + 12), bits: wav.readUInt16LE(at + 22) };
    if (id === 'data') {
      expect(at + 8 + size).toBe(wav.length); // the data chunk's size is written, and is the rest of the file
      return { ...fmt!, data: wav.subarray(at + 8) };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

describe('music: a stored clip as WAV or FLAC (GET /music-a/clips/{clip_id}/audio)', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let files: TestServer;
  const upload = pcm16(3, 48000, 2, 11); // not the sandbox's rate, so the export keeps the clip's own

  beforeAll(async () => {
    files = await startServer((req, res) => {
      if (req.url === '/up.wav') return sendBytes(res, 'audio/wav', upload.wav);
      res.statusCode = 404;
      res.end();
    });
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', MUSIC_SANDBOX_DURATION_S: '4' });
    key = await t.createKey('team-wav');
    otherKey = await t.createKey('team-wav-other');
  });
  afterAll(async () => {
    await t?.close();
    await files?.close();
  });

  const fetchTask = async (id: string) => (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data;
  const ended = async (path: string, body: unknown) => {
    const res = await api(t.url, 'POST', path, { key, body });
    expect([res.status, res.body.code]).toEqual([200, 'success']);
    const task = await pollUntil(() => fetchTask(res.body.data), (d) => d?.status === 'SUCCESS' || d?.status === 'FAILURE', { timeoutMs: 60_000, what: 'the task to end' });
    expect([task.status, task.fail_reason]).toEqual(['SUCCESS', '']);
    return task;
  };
  const download = (clipId: string, format: string, headers: Record<string, string> = {}, k = key) =>
    fetch(`${t.url}/music-a/clips/${clipId}/audio?format=${format}`, { headers: { authorization: `Bearer ${k}`, ...headers } });

  let take: { id: string; audio_url: string };
  let uploadId: string;

  it("a generated take's WAV: 16-bit PCM at the clip's own rate and channels, the sizes in its header, the stored MP3's samples exactly", async () => {
    const task = await ended('/music-a/submit/music', { prompt: 'tide pools at dawn', tags: 'ambient', title: 'Tide / Pools' });
    take = task.data[0];
    const mp3 = Buffer.from(await (await fetch(take.audio_url)).arrayBuffer());
    const res = await download(take.id, 'wav');
    const wav = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Tide Pools.wav"'); // named after the title, its slash left out
    expect(Number(res.headers.get('content-length'))).toBe(wav.length);
    const { sampleRate, channels } = await probeAudio(mp3);
    const parsed = readWav(wav);
    expect({ tag: parsed.tag, channels: parsed.channels, rate: parsed.rate, bits: parsed.bits }).toEqual({ tag: 1, channels, rate: sampleRate, bits: 16 });
    // both decoded by the tests' own ffmpeg (the static build), not the service's
    const fromMp3 = await decodeS16(mp3, 'mp3');
    expect(fromMp3.length).toBeGreaterThan(3.9 * sampleRate * channels * 2);
    expect((await decodeS16(wav, 'wav')).equals(fromMp3)).toBe(true);
    expect(parsed.data.equals(fromMp3)).toBe(true);
  });

  it("an upload's FLAC decodes to the upload's own samples, at its own 48 kHz and two channels", async () => {
    uploadId = (await ended('/music-a/uploads/audio-url', { url: `${files.url}/up.wav` })).task_id;
    const res = await download(uploadId, 'flac');
    const flac = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/flac');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename=${uploadId}.flac`); // a token: no quotes needed
    expect(flac.toString('latin1', 0, 4)).toBe('fLaC');
    // STREAMINFO (the first metadata block) holds the total sample count: the file was written where ffmpeg could seek back
    const totalSamples = (flac.readUInt8(8 + 13) & 0x0f) * 2 ** 32 + flac.readUInt32BE(8 + 14);
    expect(totalSamples).toBe(upload.samples.length / 4);
    expect(await probeAudio(flac)).toEqual({ sampleRate: 48000, channels: 2 });
    expect((await decodeS16(flac, 'flac')).equals(upload.samples)).toBe(true);
    // and its WAV is the upload's samples, byte for byte
    expect(readWav(Buffer.from(await (await download(uploadId, 'wav')).arrayBuffer())).data.equals(upload.samples)).toBe(true);
  });

  it('ETag: the same copy asked again with If-None-Match is 304, without a body', async () => {
    const first = await download(uploadId, 'flac');
    await first.arrayBuffer();
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/".+-flac"$/);
    const again = await download(uploadId, 'flac', { 'if-none-match': etag });
    expect([again.status, await again.text()]).toEqual([304, '']);
    const wav = await download(uploadId, 'wav', { 'if-none-match': etag }); // another format is another copy
    expect(wav.status).toBe(200);
    await wav.arrayBuffer();
  });

  it("another owner's clip, an unknown clip and an id that is no uuid are 404", async () => {
    for (const [id, k] of [[take.id, otherKey], [uploadId, otherKey], ['5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', key], ['not-a-clip', key]]) {
      const res = await api(t.url, 'GET', `/music-a/clips/${id}/audio?format=wav`, { key: k });
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
      expect(res.body.message).toMatch(/^clip_id: there is no clip .* among yours/);
      expect(res.body.request_id).toEqual(res.headers.get('x-request-id'));
    }
  });

  it('a format other than wav or flac, or none, is a 400 naming the field', async () => {
    for (const query of ['?format=ogg', '?format=WAV ', '?format=', '']) {
      const res = await api(t.url, 'GET', `/music-a/clips/${take.id}/audio${query}`, { key });
      expect([res.status, res.body.code]).toEqual([400, 'invalid_parameter']);
      // none at all: required, with the rule
      expect(res.body.message).toMatch(query === '' ? /^format is required: it must be one of wav, flac/ : /^format must be one of wav, flac/);
    }
  });

  it('HEAD answers the headers alone; hostile ids and formats are refused, never a 5xx', async () => {
    const head = await fetch(`${t.url}/music-a/clips/${uploadId}/audio?format=wav`, { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
    expect([head.status, head.headers.get('content-type'), Number(head.headers.get('content-length'))]).toEqual([200, 'audio/wav', 44 + upload.samples.length]);
    const ids = ['%00', '%ED%A0%80', '%EF%BF%BF', 'a'.repeat(5000), `${take.id}%00`, take.id.toUpperCase()];
    const formats = ['wav&format=flac', '%00', '%ED%A0%80', 'wav%00', 'x'.repeat(5000)];
    const paths = [...ids.map((id) => `/music-a/clips/${id}/audio?format=wav`), ...formats.map((f) => `/music-a/clips/${take.id}/audio?format=${f}`), `/music-a/clips/${take.id}/audio?format[]=wav`];
    for (const path of paths) {
      const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${key}` } });
      const body = res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : await res.arrayBuffer();
      expect([path, res.status < 500]).toEqual([path, true]);
      if (res.status >= 400) expect([path, (body as { request_id?: string }).request_id]).toEqual([path, res.headers.get('x-request-id')]);
    }
  });

  // last: retention expires every task of this app
  it('a clip whose audio expired is 410', async () => {
    await t.app.get(MediaService).runRetention(new Date(Date.now() + 1000 * 86400_000));
    for (const id of [take.id, uploadId]) {
      const res = await api(t.url, 'GET', `/music-a/clips/${id}/audio?format=flac`, { key });
      expect([res.status, res.body.code]).toEqual([410, 'gone']);
      expect(res.body.message).toMatch(/^clip_id: clip .* has expired/);
    }
  });
});
