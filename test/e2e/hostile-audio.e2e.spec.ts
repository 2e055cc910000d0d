import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeMusicAggregator, startFakeMusicAggregator } from '../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { decodeMono, musicalWav, testMp3 } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { processesWith } from '../support/processes.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

// Hostile files a caller (or an upstream) may hand the service as audio: playlists and lists that name other
// files (a file of the worker's disk, another team's stored clip), a live playlist that never ends, and
// files whose header lies. Each is uploaded by URL from a loopback file server, then continued and joined,
// in sandbox and in relay mode; and, as a clip stored before uploads were checked, put straight into the
// store and then continued and joined. Each must end failed or refused with a clear reason within its
// step's limit, leave no ffmpeg behind, and let nothing it names reach a result; the next concat works.

/** Each task's deadline (its step's limit): every hostile task must end well within it. */
const LIMIT_S = 30;
/** The pitch of the file on the worker's disk that the playlists name: a result holding it would sound it. */
const SECRET_HZ = 1234;

const secretDir = mkdtempSync(path.join(tmpdir(), 'mgw-secret-'));
const SECRET = path.join(secretDir, 'secret.mp3');
writeFileSync(SECRET, testMp3(13, SECRET_HZ));

/** An ID3v2.3 tag of `size` bytes in all, zeros inside: over 4 kB, it once got a playlist past the upload check. */
function id3(size: number): Buffer {
  const body = size - 10;
  return Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, (body >> 21) & 0x7f, (body >> 14) & 0x7f, (body >> 7) & 0x7f, body & 0x7f]), Buffer.alloc(body)]);
}

const playlist = (target: string) => Buffer.from(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:20\n#EXTINF:13.0,\n${target}\n#EXT-X-ENDLIST\n`);

/** A 16-bit mono WAV of a tone whose header says `claimS` seconds of data. */
function lyingWav(seconds: number, claimS: number): Buffer {
  const rate = 8000;
  const data = Buffer.alloc(seconds * rate * 2);
  for (let i = 0; i < seconds * rate; i++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 2 * i);
  const head = Buffer.alloc(44);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8, 'latin1');
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(1, 20);
  head.writeUInt16LE(1, 22);
  head.writeUInt32LE(rate, 24);
  head.writeUInt32LE(rate * 2, 28);
  head.writeUInt16LE(2, 32);
  head.writeUInt16LE(16, 34);
  head.write('data', 36, 'latin1');
  head.writeUInt32LE(claimS * rate * 2, 40);
  return Buffer.concat([head, data]);
}

const truncatedMp3 = (() => {
  const whole = testMp3(30);
  return whole.subarray(0, Math.round(whole.length / 10));
})();

/** The share of a signal's power at one pitch (Goertzel; 1 for a pure tone at it, about 0 for one without it). */
function toneShare(samples: Float32Array, hz: number, rate = 44100): number {
  const k = (2 * Math.PI * hz) / rate;
  const coeff = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (const x of samples) {
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
    energy += x * x;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return energy ? power / ((samples.length / 2) * energy) : 0;
}

const PLAYLIST_REASON = 'is an HLS playlist, not audio (playlists are not accepted)';
const LIST_REASON = 'is an ffconcat list, not audio (lists of files are not accepted)';

describe('hostile audio', () => {
  let files: TestServer;
  /** Paths the file server was asked for. */
  const requested: string[] = [];
  const held: (() => void)[] = [];
  /** Where the victim team's clip is stored (set once it is uploaded). */
  let victimClip = '/nonexistent';
  const good = musicalWav(3, 11);

  /** The hostile files, by path on the file server: what a caller points an upload at. */
  const served = (base: string): Record<string, () => Buffer> => ({
    '/live.m3u8': () => Buffer.from(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3600\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:3600.0,\n${base}/segment.ts\n`),
    '/disk-url.m3u8': () => playlist(`file://${SECRET}`),
    '/disk-path.m3u8': () => playlist(SECRET),
    '/other-team.m3u8': () => playlist(`file://${victimClip}`),
    '/list.ffconcat': () => Buffer.from(`ffconcat version 1.0\nfile '${SECRET}'\nfile '${victimClip}'\n`),
    '/tagged.mp3': () => Buffer.concat([id3(5000), playlist(`file://${SECRET}`)]),
    '/truncated.mp3': () => truncatedMp3,
    '/lying.wav': () => lyingWav(2, 120),
    '/good.wav': () => good,
    '/victim.wav': () => musicalWav(4, 42),
  });

  /** What each hostile upload ends with: the reason, after "the file at url ". */
  const HOSTILE: [string, string, string | RegExp][] = [
    ['a live HLS playlist (no end, one hour-long segment)', '/live.m3u8', PLAYLIST_REASON],
    ['an HLS playlist naming a file of the worker by file:// URL', '/disk-url.m3u8', PLAYLIST_REASON],
    ['an HLS playlist naming a file of the worker by its path', '/disk-path.m3u8', PLAYLIST_REASON],
    ["an HLS playlist naming another team's stored clip", '/other-team.m3u8', PLAYLIST_REASON],
    ['an ffconcat list', '/list.ffconcat', LIST_REASON],
    ['an HLS playlist behind a 5 kB ID3 tag', '/tagged.mp3', PLAYLIST_REASON],
    ['a truncated MP3', '/truncated.mp3', /^is damaged: its header says 30 s, \d(\.\d)? s of audio decode$/],
    ['a WAV whose header lies about its size', '/lying.wav', 'is damaged: its header says 120 s, 2 s of audio decode'],
  ];

  beforeAll(async () => {
    files = await startServer((req, res) => {
      const url = req.url ?? '/';
      requested.push(url);
      if (url === '/segment.ts') {
        // a segment that never ends: whoever follows the live playlist waits for ever
        res.writeHead(200, { 'content-type': 'video/mp2t' });
        res.write(Buffer.alloc(188, 0x47));
        return new Promise<void>((resolve) => held.push(() => (res.end(), resolve())));
      }
      const file = served(files.url)[url];
      if (file) return sendBytes(res, 'application/octet-stream', file());
      res.statusCode = 404;
      res.end();
    });
  });
  afterAll(async () => {
    for (const release of held) release();
    await files.close();
    rmSync(secretDir, { recursive: true, force: true });
  });

  /** The tests of one app (sandbox or relay): uploads by URL, and (sandbox) clips planted in its store. */
  function suite(mode: 'sandbox' | 'relay', env: () => Promise<{ env: Record<string, string>; agg?: FakeMusicAggregator }>) {
    describe(`${mode} mode`, () => {
      let t: TestApp;
      let agg: FakeMusicAggregator | undefined;
      let key: string;
      const goodIds: string[] = [];
      /** Where an upload's clip is stored (the key its media row names, under the local driver's directory). */
      const storedClip = async (id: string) =>
        path.join(t.config.dataDir, 'media', (await queryDb<{ storage_key: string }>(t.db, "SELECT storage_key FROM media WHERE task_id = $1 AND role = 'clip'", [id]))[0].storage_key);

      beforeAll(async () => {
        const setup = await env();
        agg = setup.agg;
        // one worker slot: "the next concat" runs on the very worker the hostile one ran on
        t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', WORKER_CONCURRENCY: '1', AUDIO_TIMEOUT_S: String(LIMIT_S), MUSIC_TIMEOUT_S: String(LIMIT_S), CONCAT_TIMEOUT_S: String(LIMIT_S), MUSIC_SANDBOX_DURATION_S: '2', ...setup.env });
        key = await t.createKey('team-attacker');
        const victim = await uploaded('/victim.wav', await t.createKey('team-victim'));
        victimClip = await storedClip(victim);
        await readFile(victimClip); // where the playlists say it is
        goodIds.push(await uploaded('/good.wav'), await uploaded('/good.wav'));
      });
      afterAll(async () => {
        await t.close();
        await agg?.close();
      });

      const post = (route: string, body: unknown) => api(t.url, 'POST', route, { key, body });
      const fetchTask = async (id: string, k = key) => (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key: k })).body.data;
      const ended = (id: string, k = key) => pollUntil(() => fetchTask(id, k), (d) => d?.status === 'SUCCESS' || d?.status === 'FAILURE', { timeoutMs: (LIMIT_S + 15) * 1000, what: `task ${id} to end` });
      const submitted = async (route: string, body: unknown, k = key): Promise<string> => {
        const res = await api(t.url, 'POST', route, { key: k, body });
        expect([res.status, res.body.code]).toEqual([200, 'success']);
        return res.body.data as string;
      };
      async function uploaded(file: string, k = key): Promise<string> {
        const id = await submitted('/music-a/uploads/audio-url', { url: `${files.url}${file}` }, k);
        expect((await ended(id, k)).status).toBe('SUCCESS');
        return id;
      }
      /**
       * The task ended FAILURE with `reason` (a refusal of its content, not the deadline's "timed out": so within its
       * step's limit, whatever the machine's load), with no path or ffmpeg words in it, and no audio.
       */
      const failedWith = async (id: string, reason: string | RegExp) => {
        const task = await ended(id);
        expect(task.status).toBe('FAILURE');
        expect(task.fail_reason).toMatch(typeof reason === 'string' ? new RegExp(`^${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : reason);
        expect(task.fail_reason).not.toMatch(/\/tmp|\/work|\/proc|mgw-|ffmpeg|Invalid data|\|/);
        for (const clip of task.data) expect(clip.audio_url || null).toBeNull();
        return task;
      };
      const noFfmpegLeft = async () => expect(await pollUntil(() => processesWith(t.config.workDir), (pids) => pids.length === 0, { timeoutMs: 10_000, what: 'no process on the work files' })).toEqual([]);
      /** A concat of two good clips on the same (only) worker: it works, lasts 3 + 3 s, and sounds nothing of the secret. */
      const nextConcatWorks = async () => {
        const song = await ended(await submitted('/music-a/submit/concat', { clip_ids: goodIds }));
        expect(song.status).toBe('SUCCESS');
        expect(Math.abs(song.data[0].metadata.duration - 6)).toBeLessThan(0.05);
        const samples = await decodeMono(Buffer.from(await (await fetch(song.data[0].audio_url)).arrayBuffer()), 'mp3');
        expect(toneShare(samples, SECRET_HZ)).toBeLessThan(0.01);
      };

      it('said at start which ffmpeg it runs, and its version', () => {
        const line = t.logs.lines.find((l) => typeof l.ffmpeg_version === 'string');
        expect(line).toEqual(expect.objectContaining({ ffmpeg_path: expect.stringMatching(/ffmpeg$/), ffmpeg_source: expect.stringMatching(/^(system|npm)$/) }));
      });

      it('has a detector that hears the secret in the file the playlists name, and not in the good clips', async () => {
        expect(toneShare(await decodeMono(await readFile(SECRET), 'mp3'), SECRET_HZ)).toBeGreaterThan(0.5);
        expect(toneShare(await decodeMono(good, 'wav'), SECRET_HZ)).toBeLessThan(0.01);
      });

      it.each(HOSTILE)('%s: the upload fails with a clear reason in time, and continuing or joining it is refused', async (_name, file, reason) => {
        const id = await submitted('/music-a/uploads/audio-url', { url: `${files.url}${file}` });
        await failedWith(id, typeof reason === 'string' ? `the file at url ${reason}` : new RegExp(`^the file at url ${reason.source.slice(1)}`));
        const continued = await post('/music-a/submit/music', { continue_clip_id: id, continue_at: 1, prompt: 'more' });
        expect([continued.status, continued.body.code, continued.body.message]).toEqual([400, 'invalid_parameter', expect.stringMatching(/^continue_clip_id: /)]);
        const joined = await post('/music-a/submit/concat', { clip_ids: [goodIds[0], id] });
        expect([joined.status, joined.body.code, joined.body.message]).toEqual([400, 'invalid_parameter', expect.stringMatching(/^clip_ids: /)]);
        await noFfmpegLeft();
      });

      it('never fetched what the playlists name (the live one’s segment), and the next concat on the worker works', async () => {
        expect(requested).not.toContain('/segment.ts');
        await nextConcatWorks();
        await noFfmpegLeft();
      });

      if (mode === 'sandbox') {
        /** Stored clips that are hostile, as one kept before uploads were checked would be: the reason after "the audio of clip X ". */
        const PLANTED: [string, () => Buffer, string][] = [
          ['an HLS playlist naming a file of the worker by file:// URL', () => playlist(`file://${SECRET}`), PLAYLIST_REASON],
          ['an HLS playlist naming a file of the worker by its path', () => playlist(SECRET), PLAYLIST_REASON],
          ["an HLS playlist naming another team's stored clip", () => playlist(`file://${victimClip}`), PLAYLIST_REASON],
          ['a live HLS playlist', () => served(files.url)['/live.m3u8'](), PLAYLIST_REASON],
          ['an HLS playlist behind a 5 kB ID3 tag', () => Buffer.concat([id3(5000), playlist(`file://${SECRET}`)]), PLAYLIST_REASON],
          ['an ffconcat list', () => Buffer.from(`ffconcat version 1.0\nfile '${SECRET}'\n`), LIST_REASON],
          ['not audio at all', () => Buffer.from('hello'.repeat(100)), 'is not audio in an accepted format (MP3, AAC (ADTS), WAV (PCM or float), AIFF, FLAC, Ogg (Vorbis, Opus or FLAC), M4A (MP4 audio), WebM)'],
        ];

        it.each(PLANTED)('a stored clip that is %s: its continuation and its concat fail with a clear reason, reading nothing it names', async (_name, bytes, reason) => {
          const id = await uploaded('/good.wav');
          await writeFile(await storedClip(id), bytes());
          await failedWith(await submitted('/music-a/submit/music', { continue_clip_id: id, continue_at: 1, prompt: 'more' }), `the audio of clip ${id} ${reason}`);
          await noFfmpegLeft();
          await failedWith(await submitted('/music-a/submit/concat', { clip_ids: [goodIds[0], id] }), `the audio of clip ${id} ${reason}`);
          await noFfmpegLeft();
        });

        it('fetched nothing the stored playlists name, and the next concat on the worker works', async () => {
          expect(requested).not.toContain('/segment.ts');
          await nextConcatWorks();
          await noFfmpegLeft();
        });
      }

      if (mode === 'relay') {
        it("fails a music task whose upstream's song is a playlist naming a file of the worker, and the next works", async () => {
          agg!.songBytes = Buffer.concat([id3(5000), playlist(`file://${SECRET}`)]);
          try {
            await failedWith(await submitted('/music-a/submit/music', { prompt: 'a song', tags: 'pop' }), `the upstream's clip 1 ${PLAYLIST_REASON}`);
          } finally {
            agg!.songBytes = null;
          }
          await noFfmpegLeft();
          expect((await ended(await submitted('/music-a/submit/music', { prompt: 'a song', tags: 'pop' }))).status).toBe('SUCCESS');
          await nextConcatWorks();
        });
      }
    });
  }

  suite('sandbox', async () => ({ env: {} }));
  suite('relay', async () => {
    const agg = await startFakeMusicAggregator('agg-key', 2);
    return {
      agg,
      env: { AUDIO_PROVIDER: 'relay', MUSIC_PROVIDER: 'relay', RELAY_AUDIO_URL: `${agg.url}/suno`, RELAY_MUSIC_URL: `${agg.url}/suno`, RELAY_API_KEY: 'agg-key', RELAY_POLL_MS: '50', OUTBOUND_ALLOW_HOSTS: '127.0.0.1' },
    };
  });
});
