import { bearerKey, UpstreamBusy, UpstreamGenerationFailed, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { SpeechCreate, SpeechRequest } from '../../../../src/vendors/contracts/speech-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { OPENAI_SPEECH_MODELS, OPENAI_VOICES, OpenAISpeechVendor, openaiSpeechBody } from '../../../../src/vendors/openai/openai-speech.vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { type FakeOpenAISpeech, startFakeOpenAISpeech } from '../../../support/vendors/openai/openai-speech.fake.js';
import { decodedSeconds } from '../../../support/vendors/speech-audio.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const model = (id: string) => OPENAI_SPEECH_MODELS.find((m) => m.id === id)!;
const request = (over: Partial<SpeechRequest> = {}): SpeechRequest => ({ model: null, input: 'Today is a wonderful day to build something people love!', voice: { name: 'coral' }, instructions: null, format: 'mp3', speed: 1, ...over });
const create = (id: string, over: Partial<SpeechRequest> = {}, voiceId?: string): SpeechCreate => {
  const r = request(over);
  return { model: model(id), request: r, voiceId: voiceId ?? ('name' in r.voice ? model(id).voices[r.voice.name] : r.voice.id) };
};

describe("OpenAI's speech: the request's mapping", () => {
  it("the API reference's example as sent: model, input, voice, instructions, and the format asked", () => {
    expect(openaiSpeechBody(create('gpt-4o-mini-tts', { instructions: 'Speak in a cheerful and positive tone.' }))).toEqual({
      model: 'gpt-4o-mini-tts',
      input: 'Today is a wonderful day to build something people love!',
      voice: 'coral',
      instructions: 'Speak in a cheerful and positive tone.',
      response_format: 'mp3',
    });
  });

  it('speed is sent unless 1; each format as asked', () => {
    expect(openaiSpeechBody(create('tts-1', { speed: 1.5, format: 'wav' }))).toEqual({ model: 'tts-1', input: request().input, voice: 'coral', response_format: 'wav', speed: 1.5 });
    expect(openaiSpeechBody(create('tts-1-hd', { speed: 0.25, format: 'pcm' }))).toMatchObject({ response_format: 'pcm', speed: 0.25 });
    expect(openaiSpeechBody(create('tts-1', { speed: 1 }))).not.toHaveProperty('speed');
  });

  it('a voice id that is none of its names is a custom voice, sent as {id}; one of its names as the name', () => {
    expect(openaiSpeechBody(create('gpt-4o-mini-tts', { voice: { id: 'voice_1234' } })).voice).toEqual({ id: 'voice_1234' });
    // a channel mapped `alloy` to a custom voice of its account
    expect(openaiSpeechBody(create('gpt-4o-mini-tts', { voice: { name: 'alloy' } }, 'voice_abcd')).voice).toEqual({ id: 'voice_abcd' });
    expect(openaiSpeechBody(create('gpt-4o-mini-tts', { voice: { id: 'cedar' } })).voice).toBe('cedar');
  });

  it('instructions never reach tts-1 or tts-1-hd (they do not take them)', () => {
    expect(openaiSpeechBody(create('tts-1-hd', { instructions: 'Whisper.' }))).not.toHaveProperty('instructions');
  });

  it("the catalog: gpt-4o-mini-tts speaks all thirteen voices and takes instructions and custom voices; tts-1 and tts-1-hd the nine classic ones; every voice under OpenAI's own name", () => {
    expect(Object.keys(model('gpt-4o-mini-tts').voices).sort()).toEqual([...OPENAI_VOICES].sort());
    expect(OPENAI_VOICES).toHaveLength(13);
    for (const id of ['tts-1', 'tts-1-hd']) {
      expect([id, Object.keys(model(id).voices).sort()]).toEqual([id, ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer']]);
      expect([id, model(id).instructions, model(id).voiceIds]).toEqual([id, false, false]);
    }
    expect([model('gpt-4o-mini-tts').instructions, model('gpt-4o-mini-tts').voiceIds]).toEqual([true, true]);
    for (const m of OPENAI_SPEECH_MODELS) {
      expect([m.id, m.maxInput, m.speed]).toEqual([m.id, 4096, { min: 0.25, max: 4 }]);
      for (const [name, id] of Object.entries(m.voices)) expect(id).toBe(name);
    }
  });
});

describe("OpenAI's speech adapter against the OpenAI speech fake (the real UpstreamClient, no app)", () => {
  let fake: FakeOpenAISpeech;
  let account: VendorAccount;
  const vendor = new OpenAISpeechVendor(loopbackUpstreamClient());
  beforeAll(async () => {
    fake = await startFakeOpenAISpeech('sk-adapter');
    account = { baseUrl: fake.url, auth: bearerKey('sk-adapter') };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it('answers the audio in the format asked, at 24 kHz; the fake received the mapped body', async () => {
    for (const format of ['mp3', 'flac', 'pcm'] as const) {
      const audio = await vendor.create(account, create('gpt-4o-mini-tts', { format, instructions: 'Calm.' }));
      expect([audio.format, audio.sampleRate]).toEqual([format, 24_000]);
      expect(await decodedSeconds(audio.bytes, format)).toBeGreaterThan(3);
    }
    expect(fake.received.map((r) => [r.status, r.body])).toEqual(['mp3', 'flac', 'pcm'].map((format) => [200, { model: 'gpt-4o-mini-tts', input: request().input, voice: 'coral', instructions: 'Calm.', response_format: format }]));
    expect(vendor.protocol).toBe('openai');
    expect(vendor.minPollS).toBe(0);
  });

  it("its failures as the relay reads them: a 5xx a failed generation, a rate limit busy, out of credit the account's, its safety system a content refusal, a bad key the credentials', a 200 that is not audio a failed generation too (another channel may make it)", async () => {
    const failure = (c = create('tts-1'), on = account) => vendor.create(on, c).then(() => null, (err: unknown) => err);
    fake.knobs.serverError = 1;
    expect(await failure()).toBeInstanceOf(UpstreamGenerationFailed);
    fake.knobs.rateLimited = 1;
    expect(await failure()).toMatchObject({ constructor: UpstreamBusy, answer: { status: 429 } });
    fake.knobs.insufficientQuota = true;
    expect(await failure()).toMatchObject({ constructor: UpstreamRefused, kind: 'account', message: expect.stringMatching(/insufficient_quota/) });
    fake.knobs.insufficientQuota = false;
    fake.knobs.refusal = true;
    const refused = (await failure()) as UpstreamRefused;
    expect([refused.constructor, refused.kind, refusesContent('openai', refused.message)]).toEqual([UpstreamRefused, 'request', true]);
    fake.knobs.refusal = false;
    expect(await failure(create('tts-1'), { baseUrl: fake.url, auth: bearerKey('sk-wrong') })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth', status: 401 });
    // a voice the model does not speak: OpenAI's words about the request
    expect(await failure(create('tts-1', { voice: { id: 'marin' } }))).toMatchObject({ constructor: UpstreamRefused, kind: 'request', status: 400, message: expect.stringMatching(/Invalid value: 'marin'/) });
    fake.knobs.notAudio = 1;
    expect(await failure()).toMatchObject({ constructor: UpstreamGenerationFailed, answer: { status: 200 }, message: expect.stringMatching(/^the upstream answered \d+ bytes \(application\/json\), not mp3 audio/) });
  });
});
