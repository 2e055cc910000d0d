import OpenAI, { AuthenticationError, BadRequestError, InternalServerError, NotFoundError, RateLimitError } from 'openai';
import { Stream } from 'openai/streaming';
import { type FakeOpenAISpeech, startFakeOpenAISpeech } from '../../../support/vendors/openai/openai-speech.fake.js';
import { decodedSeconds, probedAudio, spokenSeconds } from '../../../support/vendors/speech-audio.js';

/**
 * The OpenAI speech fake is what OpenAI's own SDK expects: `audio.speech.create` gets decodable audio of each
 * `response_format` (24 kHz, about as long as the text takes spoken), the `sse` stream parses as the SDK's Stream
 * reads server-sent events, and its refusals are the SDK's error classes. No gateway: the SDK and the fake alone.
 */
describe("the OpenAI speech fake, driven by OpenAI's SDK", () => {
  let fake: FakeOpenAISpeech;
  let openai: OpenAI;
  const input = 'Today is a wonderful day to build something people love!';
  beforeAll(async () => {
    fake = await startFakeOpenAISpeech('sk-test-speech');
    openai = new OpenAI({ apiKey: 'sk-test-speech', baseURL: fake.url, maxRetries: 0 });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it.each(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const)('audio.speech.create in %s: decodable audio of about the spoken length, the body as sent', async (format) => {
    const response = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'coral', input, instructions: 'Speak in a cheerful and positive tone.', response_format: format });
    const audio = Buffer.from(await response.arrayBuffer());
    const seconds = await decodedSeconds(audio, format);
    // an encoder's padding (AAC, Opus) adds some milliseconds
    expect(Math.abs(seconds - spokenSeconds(input))).toBeLessThan(0.1);
    if (format !== 'pcm') expect(await probedAudio(audio)).toEqual({ channels: 1, sampleRate: format === 'opus' ? 48_000 : 24_000 });
    expect(fake.received).toEqual([{ body: { model: 'gpt-4o-mini-tts', voice: 'coral', input, instructions: 'Speak in a cheerful and positive tone.', response_format: format }, status: 200, format, seconds: spokenSeconds(input), audio }]);
  });

  it('a speed makes it shorter; tts-1 speaks the classic voices; a custom voice as {id} on gpt-4o-mini-tts', async () => {
    const fast = Buffer.from(await (await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input, speed: 2, response_format: 'wav' })).arrayBuffer());
    expect(await decodedSeconds(fast, 'wav')).toBeCloseTo(spokenSeconds(input, 2), 1);
    const custom = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: { id: 'voice_1234' }, input: 'Hello.' });
    expect(custom.headers.get('content-type')).toBe('audio/mpeg');
    expect(fake.received.map((r) => [r.body.voice, r.status])).toEqual([
      ['alloy', 200],
      [{ id: 'voice_1234' }, 200],
    ]);
  });

  it('stream_format sse: speech.audio.delta events whose audio joins into the whole, then speech.audio.done with its usage', async () => {
    const response = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'marin', input: input.repeat(3), response_format: 'pcm', stream_format: 'sse' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events: { type: string; audio?: string; usage?: { input_tokens: number; output_tokens: number; total_tokens: number } }[] = [];
    for await (const event of Stream.fromSSEResponse<(typeof events)[number]>(response, new AbortController())) events.push(event);
    const deltas = events.filter((e) => e.type === 'speech.audio.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.at(-1)).toEqual({ type: 'speech.audio.done', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) } });
    const pcm = Buffer.concat(deltas.map((e) => Buffer.from(e.audio!, 'base64')));
    expect(await decodedSeconds(pcm, 'pcm')).toBeCloseTo(spokenSeconds(input.repeat(3)), 1);
  });

  it("refuses as OpenAI does, each refusal the SDK's class with OpenAI's param and code", async () => {
    const refused = async (params: Parameters<OpenAI['audio']['speech']['create']>[0]) => openai.audio.speech.create(params).then(() => null, (err: unknown) => err);
    await expect(refused({ model: 'tts-1', voice: 'marin', input })).resolves.toMatchObject({ constructor: BadRequestError, status: 400, param: 'voice', code: 'invalid_value' });
    await expect(refused({ model: 'tts-1-hd', voice: 'alloy', input, instructions: 'Whisper.' })).resolves.toMatchObject({ constructor: BadRequestError, param: 'instructions' });
    await expect(refused({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'x'.repeat(4097) })).resolves.toMatchObject({ constructor: BadRequestError, param: 'input', code: 'string_above_max_length' });
    await expect(refused({ model: 'gpt-4o-mini-tts', voice: 'alloy', input, speed: 4.5 })).resolves.toMatchObject({ constructor: BadRequestError, param: 'speed', code: 'decimal_above_max_value' });
    await expect(refused({ model: 'tts-1', voice: 'alloy', input, stream_format: 'sse' })).resolves.toMatchObject({ constructor: BadRequestError, param: 'stream_format' });
    await expect(refused({ model: 'tts-2', voice: 'alloy', input })).resolves.toMatchObject({ constructor: NotFoundError, code: 'model_not_found' });
    fake.knobs.refusal = true;
    await expect(refused({ model: 'gpt-4o-mini-tts', voice: 'alloy', input })).resolves.toMatchObject({ constructor: BadRequestError, code: 'moderation_blocked' });
    Object.assign(fake.knobs, { refusal: false, serverError: 1, rateLimited: 1 });
    await expect(refused({ model: 'tts-1', voice: 'alloy', input })).resolves.toMatchObject({ constructor: InternalServerError, status: 500 });
    await expect(refused({ model: 'tts-1', voice: 'alloy', input })).resolves.toMatchObject({ constructor: RateLimitError, code: 'rate_limit_exceeded' });
    fake.knobs.insufficientQuota = true;
    await expect(refused({ model: 'tts-1', voice: 'alloy', input })).resolves.toMatchObject({ constructor: RateLimitError, code: 'insufficient_quota' });
    const stranger = new OpenAI({ apiKey: 'sk-wrong', baseURL: fake.url, maxRetries: 0 });
    await expect(stranger.audio.speech.create({ model: 'tts-1', voice: 'alloy', input }).catch((err: unknown) => err)).resolves.toMatchObject({ constructor: AuthenticationError, code: 'invalid_api_key' });
    expect(fake.authFailures).toContain('Bearer sk-wrong');
  });
});
