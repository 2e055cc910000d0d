import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/infra/config/app-config.js';
import { decodeFailure, measureAudio, NoAudio, pinAudio } from '../../src/infra/ffmpeg/audio-decode.js';
import { ffmpegBinary, useFfmpeg, FfmpegUnusable, describeFfmpeg } from '../../src/infra/ffmpeg/ffmpeg-binary.js';
import { FfmpegFailed, FfmpegTimedOut, pinnedInput, runFfmpeg } from '../../src/infra/ffmpeg/ffmpeg.js';
import { type AudioSniff, bufferReader, MediaRefused, sniffAudio } from '../../src/infra/ffmpeg/media-format.js';
import { checkAudio, durationsAgree } from '../../src/modules/audio/audio-check.js';
import { decodeAudio } from '../../src/modules/music/sound/music-sound.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mgw-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file made by the ffmpeg under test from a 440 Hz tone of `seconds`, with these output options. */
function made(name: string, seconds: number, output: string[]): Buffer {
  const file = path.join(dir, name);
  execFileSync(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`, '-map_metadata', '-1', ...output, '-y', file]);
  return readFileSync(file);
}

function put(name: string, bytes: Buffer): string {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
}

const sniff = (bytes: Buffer): Promise<AudioSniff> => sniffAudio(bufferReader(bytes), bytes.length);

/** An ID3v2.3 tag of exactly `size` bytes in all (header included), its body zeros (padding). */
function id3(size: number): Buffer {
  const body = size - 10;
  return Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, (body >> 21) & 0x7f, (body >> 14) & 0x7f, (body >> 7) & 0x7f, body & 0x7f]), Buffer.alloc(body)]);
}

/** A 16-bit PCM WAV header with these fields (defaults consistent) before `data`. */
function wavFile(data: Buffer, fields: Partial<{ tag: number; channels: number; rate: number; byteRate: number; blockAlign: number; bits: number; dataSize: number }> = {}): Buffer {
  const { tag = 1, channels = 1, rate = 8000, bits = 16 } = fields;
  const blockAlign = fields.blockAlign ?? (channels * bits) / 8;
  const byteRate = fields.byteRate ?? rate * blockAlign;
  const head = Buffer.alloc(44);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(36 + data.length, 4);
  head.write('WAVEfmt ', 8, 'latin1');
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(tag, 20);
  head.writeUInt16LE(channels, 22);
  head.writeUInt32LE(rate, 24);
  head.writeUInt32LE(byteRate, 28);
  head.writeUInt16LE(blockAlign, 32);
  head.writeUInt16LE(bits, 34);
  head.write('data', 36, 'latin1');
  head.writeUInt32LE(fields.dataSize ?? data.length, 40);
  return Buffer.concat([head, data]);
}

/** `seconds` of a tone as 16-bit mono samples at `rate`. */
function tone(seconds: number, rate = 8000): Buffer {
  const n = Math.round(seconds * rate);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 2 * i);
  return out;
}

const PLAYLIST = (target: string) => Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:5,\n${target}\n#EXT-X-ENDLIST\n`);

describe('the format, from the bytes', () => {
  const mp3 = () => made('plain.mp3', 1, ['-c:a', 'libmp3lame', '-id3v2_version', '0', '-write_xing', '0']);

  it.each([
    ['mp3', 'mp3', ['-c:a', 'libmp3lame']],
    ['aac', 'aac', ['-c:a', 'aac', '-f', 'adts']],
    ['wav', 'wav', ['-c:a', 'pcm_s16le']],
    ['aiff', 'aiff', ['-c:a', 'pcm_s16be']],
    ['flac', 'flac', ['-c:a', 'flac']],
    ['ogg', 'ogg', ['-c:a', 'libvorbis']],
    ['opus', 'ogg', ['-c:a', 'libopus', '-f', 'ogg']],
    ['m4a', 'mov', ['-c:a', 'aac', '-f', 'mp4']],
    ['webm', 'matroska', ['-c:a', 'libopus', '-f', 'webm']],
  ] as const)('%s is accepted, pinned to the %s demuxer, and decodes so', async (format, demuxer, output) => {
    const bytes = made(`t.${format}`, 1.5, [...output]);
    expect(await sniff(bytes)).toEqual(expect.objectContaining({ ok: true, format, demuxer }));
    const measured = await measureAudio(path.join(dir, `t.${format}`), await pinAudio(path.join(dir, `t.${format}`)), { maxS: 10 });
    expect(Math.abs(measured.durationS - 1.5)).toBeLessThan(0.1);
  });

  it('skips ID3 tags of any size (several in a row, zero padding after) to the MP3 frames after them', async () => {
    for (const size of [10, 4096, 4097, 70_000, 1_000_000]) expect(await sniff(Buffer.concat([id3(size), mp3()]))).toEqual(expect.objectContaining({ ok: true, format: 'mp3' }));
    expect(await sniff(Buffer.concat([id3(100), id3(5000), Buffer.alloc(300), mp3()]))).toEqual(expect.objectContaining({ ok: true, format: 'mp3' }));
    expect(await sniff(Buffer.concat([id3(5000), made('t.flac', 1, ['-c:a', 'flac'])]))).toEqual(expect.objectContaining({ ok: true, format: 'flac' }));
    // eight tags in a row are skipped, a ninth is refused (a file of empty tags would otherwise be read 10 bytes at a time)
    expect(await sniff(Buffer.concat([...Array.from({ length: 8 }, () => id3(10)), mp3()]))).toEqual(expect.objectContaining({ ok: true, format: 'mp3' }));
    expect(await sniff(Buffer.concat([...Array.from({ length: 9 }, () => id3(10)), mp3()]))).toEqual({ ok: false, reason: 'has more than 8 ID3 tags in a row' });
  });

  it('refuses an HLS playlist, bare or behind an ID3 tag of any size, and an ffconcat list', async () => {
    const playlist = PLAYLIST('file:///etc/hostname');
    for (const bytes of [playlist, Buffer.concat([Buffer.from('\ufeff \n'), playlist]), Buffer.concat([id3(4000), playlist]), Buffer.concat([id3(5000), playlist]), Buffer.concat([id3(1 << 20), Buffer.alloc(10), playlist])]) {
      expect(await sniff(bytes)).toEqual({ ok: false, reason: 'is an HLS playlist, not audio (playlists are not accepted)' });
    }
    expect(await sniff(Buffer.from('#EXTINF:10,\nseg.mp3\n'))).toEqual(expect.objectContaining({ ok: false, reason: expect.stringMatching(/HLS playlist/) }));
    expect(await sniff(Buffer.from("ffconcat version 1.0\nfile '/etc/hostname'\n"))).toEqual({ ok: false, reason: 'is an ffconcat list, not audio (lists of files are not accepted)' });
    expect(await sniff(Buffer.concat([id3(5000), Buffer.from('ffconcat version 1.0\n')]))).toEqual(expect.objectContaining({ ok: false, reason: expect.stringMatching(/ffconcat list/) }));
  });

  it('wants two MP3 frames in a row (or one that ends the file), as ffmpeg does: one frame header alone is not MP3', async () => {
    const frames = mp3();
    expect(await sniff(frames)).toEqual(expect.objectContaining({ ok: true, format: 'mp3' }));
    const first = frames.subarray(0, 4);
    // the first frame's header, then text where the second frame should start
    const lone = Buffer.concat([first, Buffer.alloc(413, 0x20), PLAYLIST('x')]);
    expect(await sniff(lone)).toEqual({ ok: false, reason: expect.stringMatching(/^is not audio in an accepted format \(MP3, AAC/) });
    expect(await sniff(Buffer.concat([id3(5000), lone]))).toEqual({ ok: false, reason: 'has an ID3 tag with no MP3, AAC or FLAC audio after it' });
    expect(await sniff(id3(5000))).toEqual({ ok: false, reason: 'has an ID3 tag and nothing after it' });
  });

  it('refuses what is not in the list: text, JSON, images, video-only containers are the decoder’s to refuse', async () => {
    for (const bytes of [Buffer.from('not audio at all'), Buffer.from('{"ok":true}'), Buffer.from('[playlist]\nFile1=/etc/passwd\n'), Buffer.from('<?xml version="1.0"?><smil/>'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), Buffer.alloc(0)]) {
      expect(await sniff(bytes)).toEqual({ ok: false, reason: expect.stringMatching(/^is not audio in an accepted format/) });
    }
  });

  it('accepts a WAV whose header is consistent, at each rule’s edge, and refuses one a byte off', async () => {
    const data = tone(0.5);
    expect(await sniff(wavFile(data))).toEqual({ ok: true, format: 'wav', demuxer: 'wav', wav: { channels: 1, sampleRate: 8000, byteRate: 16000, dataBytes: data.length } });
    expect(await sniff(wavFile(data, { rate: 1000 }))).toEqual(expect.objectContaining({ ok: true }));
    expect(await sniff(wavFile(data, { rate: 999 }))).toEqual({ ok: false, reason: 'is damaged: its WAV header is inconsistent (a rate of 999 Hz)' });
    expect(await sniff(wavFile(data, { byteRate: 16001 }))).toEqual({ ok: false, reason: 'is damaged: its WAV header is inconsistent (16001 bytes a second for 8000 Hz × 2-byte frames)' });
    expect(await sniff(wavFile(data, { byteRate: 15999 }))).toEqual(expect.objectContaining({ ok: false }));
    expect(await sniff(wavFile(data, { blockAlign: 4 }))).toEqual({ ok: false, reason: 'is damaged: its WAV header is inconsistent (frames of 4 bytes for 1 × 16-bit samples)' });
    expect(await sniff(wavFile(data, { channels: 0 }))).toEqual(expect.objectContaining({ ok: false, reason: expect.stringMatching(/0 channels/) }));
    expect(await sniff(wavFile(data, { bits: 12 }))).toEqual(expect.objectContaining({ ok: false, reason: expect.stringMatching(/12-bit PCM/) }));
    expect(await sniff(wavFile(data, { tag: 0x55 }))).toEqual({ ok: false, reason: 'is a WAV of compressed or unusual audio (format tag 0x0055); only PCM and float WAV are accepted' });
    expect(await sniff(wavFile(data, { tag: 3, bits: 32, blockAlign: 4 }))).toEqual(expect.objectContaining({ ok: true }));
    // a streamed WAV's "unknown" sizes claim nothing
    expect(await sniff(wavFile(data, { dataSize: 0xffffffff }))).toEqual(expect.objectContaining({ ok: true, wav: expect.objectContaining({ dataBytes: null }) }));
  });
});

describe('what the header claims against what decodes', () => {
  it('agrees within 0.5 s, or 1 % of the claim when that is more, on both sides', () => {
    expect([durationsAgree(10, 9.5), durationsAgree(10, 10.5), durationsAgree(10, 9.49), durationsAgree(10, 10.51)]).toEqual([true, true, false, false]);
    expect([durationsAgree(200, 198), durationsAgree(200, 202), durationsAgree(200, 197.99), durationsAgree(200, 202.01)]).toEqual([true, true, false, false]);
    expect([durationsAgree(0.2, 0), durationsAgree(120, 3.2)]).toEqual([true, false]);
  });

  const check = (file: string, maxDurationS = 60) => checkAudio(file, { maxDurationS, maxDurationName: 'AUDIO_MAX_DURATION_S' });

  it('refuses a truncated MP3 whose Xing/Info frame count says more than decodes, and takes it whole', async () => {
    const whole = made('long.mp3', 30, ['-c:a', 'libmp3lame', '-b:a', '64k']);
    const ok = await check(put('whole.mp3', whole));
    expect(ok).toEqual({ ok: true, audio: { format: 'mp3', contentType: 'audio/mpeg', durationS: expect.closeTo(30, 1) } });
    const cut = await check(put('cut.mp3', whole.subarray(0, Math.round(whole.length / 10))));
    expect(cut).toEqual({ ok: false, reason: expect.stringMatching(/^is damaged: its header says 30 s, (2\.\d|3(\.\d)?) s of audio decode$/) });
  });

  it('refuses a WAV whose data size says more than the file holds (or less), and measures an honest or streamed one', async () => {
    const data = tone(2);
    expect(await check(put('honest.wav', wavFile(data)))).toEqual({ ok: true, audio: { format: 'wav', contentType: 'audio/wav', durationS: 2 } });
    expect(await check(put('streamed.wav', wavFile(data, { dataSize: 0xffffffff })))).toEqual({ ok: true, audio: expect.objectContaining({ durationS: 2 }) });
    expect(await check(put('lying.wav', wavFile(data, { dataSize: 16000 * 120 })))).toEqual({ ok: false, reason: 'is damaged: its header says 120 s, 2 s of audio decode' });
    // 0.5 s more than the file holds still agrees; a little more does not
    expect(await check(put('edge.wav', wavFile(data, { dataSize: data.length + 8000 })))).toEqual(expect.objectContaining({ ok: true }));
    expect(await check(put('past.wav', wavFile(data, { dataSize: data.length + 8002 })))).toEqual({ ok: false, reason: 'is damaged: its header says 2.5 s, 2 s of audio decode' });
    expect(await check(put('empty.wav', wavFile(Buffer.alloc(0))))).toEqual({ ok: false, reason: 'is damaged: no audio decodes from it' });
  });

  it('refuses audio longer than the limit, decoding no more than a second past it', async () => {
    expect(await check(put('two.wav', wavFile(tone(2))), 2)).toEqual(expect.objectContaining({ ok: true }));
    expect(await check(put('longer.wav', wavFile(tone(2.01))), 2)).toEqual({ ok: false, reason: 'lasts more than AUDIO_MAX_DURATION_S (2 s)' });
    const hours = put('hours.wav', wavFile(tone(30), { dataSize: 16000 * 3600 * 5 }));
    expect(await check(hours, 2)).toEqual({ ok: false, reason: 'lasts more than AUDIO_MAX_DURATION_S (2 s)' });
  });

  it('refuses playlists and lists before any decoder runs', async () => {
    expect(await check(put('list.mp3', Buffer.concat([id3(5000), PLAYLIST('/etc/hostname')])))).toEqual({ ok: false, reason: 'is an HLS playlist, not audio (playlists are not accepted)' });
  });
});

describe('a pinned decode', () => {
  it('never follows a playlist, even when a file that is one is pinned as MP3 (the sniff bypassed)', async () => {
    made('secret.mp3', 5, ['-c:a', 'libmp3lame']);
    const secret = path.join(dir, 'secret.mp3');
    for (const target of [`file://${secret}`, secret]) {
      const file = put('hostile.mp3', Buffer.concat([id3(5000), PLAYLIST(target)]));
      const out = path.join(dir, 'out.wav');
      // left to probe, ffmpeg takes the file for the playlist it is and reads the file it names: what pinning prevents
      await runFfmpeg(['-loglevel', 'error', '-i', file, '-f', 'wav', '-y', out], { limitMs: 30_000 });
      expect(readFileSync(out).length).toBeGreaterThan(400_000);
      rmSync(out);
      await expect(runFfmpeg(['-loglevel', 'error', ...pinnedInput('mp3', file), '-f', 'wav', '-y', out], { limitMs: 30_000 })).rejects.toBeInstanceOf(FfmpegFailed);
      expect(readdirSync(dir)).not.toContain('out.wav');
      // and the whole path refuses it before ffmpeg is asked
      await expect(decodeAudio(file)).rejects.toThrow(new MediaRefused('is an HLS playlist, not audio (playlists are not accepted)'));
    }
  });

  it('is killed at its wall-clock limit, and its failures read without paths or ffmpeg’s words', async () => {
    const started = Date.now();
    const hang = runFfmpeg(['-f', 's16le', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-f', 'null', '-'], { limitMs: 300, feed: () => new Promise<void>(() => undefined) });
    await expect(hang).rejects.toBeInstanceOf(FfmpegTimedOut);
    expect(Date.now() - started).toBeLessThan(10_000);
    const failed = await runFfmpeg(['-loglevel', 'error', ...pinnedInput('mp3', path.join(dir, 'missing.mp3')), '-f', 'null', '-'], { limitMs: 30_000 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(FfmpegFailed);
    expect((failed as FfmpegFailed).detail).toContain(dir); // for the log
    expect((failed as Error).message).not.toContain(dir);
    expect(decodeFailure(failed, 'mp3')).toBe('is damaged: its MP3 audio does not decode');
    expect(decodeFailure(new FfmpegTimedOut(90_000))).toBe('took longer than 90 s to decode');
    expect(decodeFailure(new NoAudio())).toBe('is damaged: no audio decodes from it');
    expect(decodeFailure(new Error('something else'))).toBeUndefined();
  });
});

describe('the ffmpeg binary', () => {
  afterAll(() => useFfmpeg(undefined));

  it('is FFMPEG_PATH when set, the system’s when there is one, else the npm package’s, which is warned about', () => {
    const shipped = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
    expect(useFfmpeg(shipped)).toEqual({ path: shipped, version: 'N-47683-g0e8eb07980-static', source: 'setting' });
    expect(describeFfmpeg({ path: shipped, version: 'N-47683-g0e8eb07980-static', source: 'npm' })).toEqual({ level: 'warn', message: expect.stringMatching(/December 2018.*install your distribution's ffmpeg/) });
    expect(() => useFfmpeg('/nonexistent/ffmpeg')).toThrow(FfmpegUnusable);
    const chosen = useFfmpeg(undefined);
    expect(chosen.source).toBe(['/usr/local/bin/ffmpeg', '/usr/bin/ffmpeg'].includes(chosen.path) ? 'system' : 'npm');
  });

  it('is set by FFMPEG_PATH, an absolute path', () => {
    expect(loadConfig({ FFMPEG_PATH: '/opt/ffmpeg/bin/ffmpeg' }).ffmpegPath).toBe('/opt/ffmpeg/bin/ffmpeg');
    expect(loadConfig({}).ffmpegPath).toBeUndefined();
    expect(() => loadConfig({ FFMPEG_PATH: 'ffmpeg' })).toThrow(/FFMPEG_PATH must be the absolute path of an ffmpeg binary/);
  });
});
