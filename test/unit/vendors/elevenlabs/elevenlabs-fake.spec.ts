import { ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../../../support/vendors/elevenlabs/elevenlabs.fake.js';
import { decodedSeconds, probedAudio, spokenSeconds } from '../../../support/vendors/speech-audio.js';

/** A stream the SDK answers, read whole. */
async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * The ElevenLabs fake is what ElevenLabs' own SDK expects: `textToSpeech.convert` and `.stream` get decodable
 * audio in the output format asked, the path, query and body it sends are ElevenLabs' words, and its refusals
 * are the SDK's errors with ElevenLabs' `{detail: {status, message}}`. No gateway: the SDK and the fake alone.
 */
describe("the ElevenLabs fake, driven by ElevenLabs' SDK", () => {
  let fake: FakeElevenLabs;
  let elevenlabs: ElevenLabsClient;
  const text = 'The first move is what sets everything in motion.';
  beforeAll(async () => {
    fake = await startFakeElevenLabs('xi-test-key');
    elevenlabs = new ElevenLabsClient({ apiKey: 'xi-test-key', baseUrl: fake.url, maxRetries: 0 });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it("textToSpeech.convert as its reference's example: MP3 at 44.1 kHz, about the spoken length; the request in ElevenLabs' words", async () => {
    const audio = await bytesOf(await elevenlabs.textToSpeech.convert('JBFqnCBsd6RMkjVDRZzb', { outputFormat: 'mp3_44100_128', text, modelId: 'eleven_multilingual_v2' }));
    expect(await probedAudio(audio)).toEqual({ channels: 1, sampleRate: 44_100 });
    expect(Math.abs((await decodedSeconds(audio, 'mp3')) - spokenSeconds(text))).toBeLessThan(0.1);
    expect(fake.received).toEqual([{ voiceId: 'JBFqnCBsd6RMkjVDRZzb', outputFormat: 'mp3_44100_128', body: { text, model_id: 'eleven_multilingual_v2' }, stream: false, status: 200, seconds: spokenSeconds(text) }]);
  });

  it('pcm_24000 is raw 16-bit PCM at 24 kHz; voice_settings.speed makes it shorter; .stream answers the same way', async () => {
    const pcm = await bytesOf(await elevenlabs.textToSpeech.convert('EXAVITQu4vr4xnSDxMaL', { outputFormat: 'pcm_24000', text, modelId: 'eleven_flash_v2_5', voiceSettings: { speed: 1.2 } }));
    expect(await decodedSeconds(pcm, 'pcm', 24_000)).toBeCloseTo(spokenSeconds(text, 1.2), 1);
    const streamed = await bytesOf(await elevenlabs.textToSpeech.stream('TX3LPaxmHKxFdv7VOQHJ', { outputFormat: 'opus_48000_64', text, modelId: 'eleven_v3' }));
    expect(await probedAudio(streamed)).toEqual({ channels: 1, sampleRate: 48_000 });
    expect(fake.received.map((r) => [r.voiceId, r.outputFormat, r.body, r.stream])).toEqual([
      ['EXAVITQu4vr4xnSDxMaL', 'pcm_24000', { text, model_id: 'eleven_flash_v2_5', voice_settings: { speed: 1.2 } }, false],
      ['TX3LPaxmHKxFdv7VOQHJ', 'opus_48000_64', { text, model_id: 'eleven_v3' }, true],
    ]);
  });

  it("refuses as ElevenLabs does: its SDK's errors carry {detail: {status, message}}", async () => {
    const refused = (voiceId: string, request: Parameters<ElevenLabsClient['textToSpeech']['convert']>[1], client = elevenlabs) =>
      client.textToSpeech.convert(voiceId, request).then(
        () => null,
        (err: unknown) => (err instanceof ElevenLabsError ? [err.statusCode, (err.body as { detail?: { status?: string } }).detail?.status ?? err.body] : err),
      );
    expect(await refused('no-such-voice', { text })).toEqual([404, 'voice_not_found']);
    expect(await refused('JBFqnCBsd6RMkjVDRZzb', { text: 'x'.repeat(5_001), modelId: 'eleven_v3' })).toEqual([400, 'max_character_limit_exceeded']);
    expect(await refused('JBFqnCBsd6RMkjVDRZzb', { text, voiceSettings: { speed: 1.5 } })).toEqual([400, 'invalid_voice_settings']);
    fake.knobs.refusal = true;
    expect(await refused('JBFqnCBsd6RMkjVDRZzb', { text })).toEqual([400, 'bad_prompt']);
    Object.assign(fake.knobs, { refusal: false, serverError: 1, rateLimited: 1, quotaExceeded: true });
    expect(await refused('JBFqnCBsd6RMkjVDRZzb', { text })).toEqual([500, 'internal_error']);
    expect(await refused('JBFqnCBsd6RMkjVDRZzb', { text })).toEqual([429, 'too_many_concurrent_requests']);
    expect(await refused('JBFqnCBsd6RMkjVDRZzb', { text })).toEqual([401, 'quota_exceeded']);
    const stranger = new ElevenLabsClient({ apiKey: 'xi-wrong', baseUrl: fake.url, maxRetries: 0 });
    expect(await refused('JBFqnCBsd6RMkjVDRZzb', { text }, stranger)).toEqual([401, 'invalid_api_key']);
    expect(fake.authFailures).toEqual(['xi-wrong']);
  });

  it('models.list reads its models, each able to speak', async () => {
    const models = await elevenlabs.models.list();
    expect(models.map((m) => [m.modelId, m.canDoTextToSpeech])).toEqual([
      ['eleven_multilingual_v2', true],
      ['eleven_flash_v2_5', true],
      ['eleven_turbo_v2_5', true],
      ['eleven_v3', true],
    ]);
  });
});
