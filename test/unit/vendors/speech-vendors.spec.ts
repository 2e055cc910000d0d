import { speechAudioOf } from '../../../src/vendors/contracts/speech-answer.js';
import { SPEECH_FORMATS } from '../../../src/vendors/contracts/speech-vendor.js';
import { UnusableAnswer } from '../../../src/vendors/contracts/vendor.js';
import { OPENAI_VOICES } from '../../../src/vendors/openai/openai-speech.vendor.js';
import { vendorOf } from '../../../src/vendors/registry.js';
import { GATEWAY_SPEECH_PROTOCOL, SPEECH_VENDORS, speechCatalogOf, speechVendorOf } from '../../../src/vendors/speech-vendors.js';
import { wav } from '../../support/media.js';
import { speechLike } from '../../support/vendors/speech-audio.js';

const answer = (body: Buffer, contentType?: string) => ({ body, headers: contentType ? { 'content-type': contentType } : {} });

describe('a binary speech answer, read (speechAudioOf)', () => {
  it.each(['mp3', 'opus', 'aac', 'flac', 'wav'] as const)('%s audio where %s was asked is taken as it is', async (format) => {
    const bytes = await speechLike(format, 1);
    expect(await speechAudioOf(answer(bytes, 'audio/whatever'), format, 24_000)).toEqual({ bytes, format, sampleRate: 24_000 });
  });

  it("a WAV's own rate is its rate; raw PCM is any whole number of 16-bit samples at the rate the vendor gives", async () => {
    expect((await speechAudioOf(answer(wav(0.5, 16_000)), 'wav', 24_000)).sampleRate).toBe(16_000);
    const pcm = Buffer.alloc(4800);
    expect(await speechAudioOf(answer(pcm, 'application/octet-stream'), 'pcm', 24_000)).toEqual({ bytes: pcm, format: 'pcm', sampleRate: 24_000 });
  });

  it('an unusable answer names what came instead: an empty body, JSON or a page under 200, another format, an odd PCM, bytes that are no audio', async () => {
    const read = (a: ReturnType<typeof answer>, format: (typeof SPEECH_FORMATS)[number]) => speechAudioOf(a, format, 24_000).then(() => null, (err: unknown) => (err instanceof UnusableAnswer ? err.message : err));
    expect(await read(answer(Buffer.alloc(0), 'audio/mpeg'), 'mp3')).toBe('the upstream answered without audio: an empty body (audio/mpeg)');
    expect(await read(answer(Buffer.from('{"ok":true}'), 'application/json; charset=utf-8'), 'mp3')).toBe('the upstream answered 11 bytes (application/json), not mp3 audio: {"ok":true}');
    expect(await read(answer(Buffer.from('<html>Bad gateway</html>'), 'text/html'), 'wav')).toMatch(/^the upstream answered 24 bytes \(text\/html\), not wav audio: <html>/);
    expect(await read(answer(await speechLike('mp3', 1), 'audio/mpeg'), 'wav')).toBe('the upstream answered mp3 audio (audio/mpeg) where wav was asked');
    expect(await read(answer(Buffer.alloc(4801)), 'pcm')).toBe('the upstream answered 4801 bytes, not 16-bit PCM (an odd number of bytes)');
    expect(await read(answer(Buffer.from('not audio at all, just words'), 'audio/flac'), 'flac')).toMatch(/^the upstream's answer \(audio\/flac\) is not audio in an accepted format .*, not flac audio$/);
  });

  it('raw PCM asked: a file of a known format (by its bytes) or a page is refused; samples are taken whatever their type says', async () => {
    const read = (a: ReturnType<typeof answer>) => speechAudioOf(a, 'pcm', 24_000).then((audio) => audio.bytes.length, (err: unknown) => (err instanceof UnusableAnswer ? err.message : err));
    const mp3 = await speechLike('mp3', 1);
    // ElevenLabs answering MP3 for pcm_24000, under either type
    expect(await read(answer(mp3, 'audio/mpeg'))).toBe('the upstream answered mp3 audio (audio/mpeg) where raw 16-bit PCM was asked');
    expect(await read(answer(mp3, 'application/octet-stream'))).toBe('the upstream answered mp3 audio (application/octet-stream) where raw 16-bit PCM was asked');
    expect(await read(answer(wav(0.5, 24_000), 'audio/pcm'))).toBe('the upstream answered wav audio (audio/pcm) where raw 16-bit PCM was asked');
    const page = Buffer.from('<html><body>oops</body></html>  ');
    expect(await read(answer(page, 'audio/pcm'))).toMatch(/^the upstream answered 32 bytes \(audio\/pcm\), not raw 16-bit PCM: <html>/);
    expect(await read(answer(Buffer.from('{"detail": "x"}  '), undefined))).toMatch(/^the upstream answered 17 bytes, not raw 16-bit PCM: \{"detail"/);
    // samples are taken under the types raw PCM comes as, or none
    const samples = Buffer.from(Array.from({ length: 4800 }, (_, i) => (i * 37) % 256));
    // (a vendor may label them with its default format's type)
    for (const type of ['audio/pcm', 'audio/l16; rate=24000', 'application/octet-stream', 'audio/mpeg', undefined]) expect(await read(answer(samples, type))).toBe(4800);
  });
});

describe('the registry of speech vendors', () => {
  it('one adapter per protocol, each of a vendor whose descriptor serves speech and whose poll floor it reads', () => {
    expect(SPEECH_VENDORS.map((v) => v.protocol)).toEqual(['openai', 'elevenlabs', 'gemini']);
    for (const v of SPEECH_VENDORS) expect([v.protocol, vendorOf(v.protocol)?.operations.includes('speech')]).toEqual([v.protocol, true]);
    expect(vendorOf('gateway')?.operations).toContain('speech');
  });

  it("a gateway channel speaks this gateway's OpenAI speech door; a protocol without speech has no catalog", () => {
    expect(GATEWAY_SPEECH_PROTOCOL).toBe('openai');
    expect(speechVendorOf('gateway')).toBe(speechVendorOf('openai'));
    expect(speechCatalogOf('gateway')).toBe(speechCatalogOf('openai'));
    expect(speechCatalogOf('elevenlabs').map((m) => m.id)).toEqual(['eleven_multilingual_v2', 'eleven_flash_v2_5', 'eleven_turbo_v2_5', 'eleven_v3']);
    expect(speechCatalogOf('gemini').map((m) => m.id)).toEqual(['gemini-2.5-flash-preview-tts', 'gemini-2.5-pro-preview-tts']);
    expect(speechCatalogOf('kling')).toEqual([]);
    expect(speechVendorOf('luma')).toBeUndefined();
  });

  it("every model of every vendor speaks the gateway's voice names it declares as ids of its own, and takes at least OpenAI's nine classic voices", () => {
    for (const v of SPEECH_VENDORS) {
      for (const m of v.models) {
        const names = Object.keys(m.voices);
        expect([v.protocol, m.id, names.every((n) => OPENAI_VOICES.includes(n))]).toEqual([v.protocol, m.id, true]);
        expect([v.protocol, m.id, ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'].every((n) => typeof m.voices[n] === 'string' && m.voices[n].length > 0)]).toEqual([v.protocol, m.id, true]);
        expect([v.protocol, m.id, m.maxInput >= 4096]).toEqual([v.protocol, m.id, true]);
      }
    }
  });
});
