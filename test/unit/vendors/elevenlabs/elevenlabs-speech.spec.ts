import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { SpeechCreate, SpeechRequest } from '../../../../src/vendors/contracts/speech-vendor.js';
import type { VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { ELEVENLABS_DEFAULT_VOICES, ELEVENLABS_SPEECH_MODELS, ElevenLabsSpeechVendor, elevenlabsOutputOf, elevenlabsSpeechRequest } from '../../../../src/vendors/elevenlabs/elevenlabs-speech.vendor.js';
import { ELEVENLABS, elevenlabsError, elevenlabsRefusal } from '../../../../src/vendors/elevenlabs/elevenlabs.vendor.js';
import { OPENAI_VOICES } from '../../../../src/vendors/openai/openai-speech.vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { type FakeElevenLabs, PREMADE_VOICES, startFakeElevenLabs } from '../../../support/vendors/elevenlabs/elevenlabs.fake.js';
import { decodedSeconds } from '../../../support/vendors/speech-audio.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const model = (id: string) => ELEVENLABS_SPEECH_MODELS.find((m) => m.id === id)!;
const text = 'The first move is what sets everything in motion.';
const request = (over: Partial<SpeechRequest> = {}): SpeechRequest => ({ model: null, input: text, voice: { name: 'ballad' }, instructions: null, format: 'mp3', speed: 1, ...over });
const create = (id: string, over: Partial<SpeechRequest> = {}, voiceId?: string): SpeechCreate => {
  const r = request(over);
  return { model: model(id), request: r, voiceId: voiceId ?? ('name' in r.voice ? model(id).voices[r.voice.name] : r.voice.id) };
};

describe("ElevenLabs' speech: the request's mapping", () => {
  it("its API reference's example: POST /v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128 with text and model_id", () => {
    expect(elevenlabsSpeechRequest(create('eleven_multilingual_v2'))).toEqual({
      path: '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128',
      body: { text, model_id: 'eleven_multilingual_v2' },
    });
  });

  it('a speed other than 1 is voice_settings.speed (and only that setting); v3 is sent none', () => {
    expect(elevenlabsSpeechRequest(create('eleven_flash_v2_5', { speed: 1.2 })).body).toEqual({ text, model_id: 'eleven_flash_v2_5', voice_settings: { speed: 1.2 } });
    expect(elevenlabsSpeechRequest(create('eleven_v3', { speed: 1.2 })).body).toEqual({ text, model_id: 'eleven_v3' });
  });

  it('MP3 is asked as mp3_44100_128; every other format as raw PCM at 24 kHz (lossless: the gateway converts once)', () => {
    expect(elevenlabsOutputOf('mp3')).toEqual({ outputFormat: 'mp3_44100_128', format: 'mp3', sampleRate: 44_100 });
    for (const format of ['opus', 'aac', 'flac', 'wav', 'pcm'] as const) expect(elevenlabsOutputOf(format)).toEqual({ outputFormat: 'pcm_24000', format: 'pcm', sampleRate: 24_000 });
    expect(elevenlabsSpeechRequest(create('eleven_turbo_v2_5', { format: 'wav' })).path).toBe('/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=pcm_24000');
  });

  it("a voice id asked or mapped by the channel goes into the path, escaped; instructions are never sent (its models take none)", () => {
    expect(elevenlabsSpeechRequest(create('eleven_v3', { voice: { id: 'my/voice id' }, instructions: 'Whisper.' }))).toEqual({ path: '/v1/text-to-speech/my%2Fvoice%20id?output_format=mp3_44100_128', body: { text, model_id: 'eleven_v3' } });
  });

  it("the catalog: each model maps all thirteen of OpenAI's voice names to premade voices, takes the account's voice ids, no instructions; speed 0.7-1.2 but on v3", () => {
    expect(ELEVENLABS_SPEECH_MODELS.map((m) => [m.id, m.maxInput, m.speed])).toEqual([
      ['eleven_multilingual_v2', 10_000, { min: 0.7, max: 1.2 }],
      ['eleven_flash_v2_5', 40_000, { min: 0.7, max: 1.2 }],
      ['eleven_turbo_v2_5', 40_000, { min: 0.7, max: 1.2 }],
      ['eleven_v3', 5_000, null],
    ]);
    expect(Object.keys(ELEVENLABS_DEFAULT_VOICES).sort()).toEqual([...OPENAI_VOICES].sort());
    // thirteen different premade voices, each one the fake (its default library) knows
    expect(new Set(Object.values(ELEVENLABS_DEFAULT_VOICES)).size).toBe(13);
    for (const id of Object.values(ELEVENLABS_DEFAULT_VOICES)) expect([id, PREMADE_VOICES[id] !== undefined]).toEqual([id, true]);
    for (const m of ELEVENLABS_SPEECH_MODELS) expect([m.id, m.voiceIds, m.instructions]).toEqual([m.id, true, false]);
  });
});

describe("ElevenLabs' errors, read", () => {
  it("its {detail: {status, message}}, FastAPI's 422 list (naming the field), a plain detail; another shape is not its", () => {
    expect(elevenlabsError({ detail: { status: 'voice_not_found', message: 'A voice with the voice_id foo was not found.' } })).toEqual({ status: 'voice_not_found', message: 'A voice with the voice_id foo was not found.' });
    expect(elevenlabsError({ detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] })).toEqual({ status: 'validation_error', message: 'text: Field required' });
    expect(elevenlabsError({ detail: [] })).toEqual({ status: 'validation_error', message: 'invalid request' });
    expect(elevenlabsError({ detail: 'Not Found' })).toEqual({ status: '', message: 'Not Found' });
    expect(elevenlabsError({ detail: { status: 'system_busy' } })).toEqual({ status: 'system_busy', message: 'system_busy' });
    expect(elevenlabsError({ error: 'something else' })).toBeUndefined();
  });

  it("quota_exceeded and a flagged account are the account's under 401; bad_prompt is a content refusal; a 404 or 422 the request's; a bad key and 429 left to the UpstreamClient", () => {
    const quota = elevenlabsRefusal(401, { detail: { status: 'quota_exceeded', message: 'This request exceeds your quota of 10000.' } })!;
    expect([quota.kind, quota.message]).toEqual(['account', 'the account is out of credits: This request exceeds your quota of 10000. (quota_exceeded)']);
    expect(elevenlabsRefusal(401, { detail: { status: 'detected_unusual_activity', message: 'Unusual activity detected. Free Tier usage disabled.' } })?.kind).toBe('account');
    const refused = elevenlabsRefusal(400, { detail: { status: 'bad_prompt', message: 'Your prompt appears to have violated our Terms of Service.' } })!;
    expect([refused.kind, refusesContent('elevenlabs', refused.message)]).toEqual(['request', true]);
    const voice = elevenlabsRefusal(404, { detail: { status: 'voice_not_found', message: 'A voice with the voice_id foo was not found.' } })!;
    expect([voice.kind, voice.status, voice.message, refusesContent('elevenlabs', voice.message)]).toEqual(['request', 404, 'A voice with the voice_id foo was not found. (voice_not_found)', false]);
    expect(elevenlabsRefusal(422, { detail: [{ loc: ['body', 'voice_settings', 'speed'], msg: 'Input should be a valid number' }] })?.message).toBe('voice_settings.speed: Input should be a valid number (validation_error)');
    expect(elevenlabsRefusal(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } })).toBeUndefined();
    expect(elevenlabsRefusal(429, { detail: { status: 'too_many_concurrent_requests', message: 'Too many' } })).toBeUndefined();
    expect(elevenlabsRefusal(500, {})).toBeUndefined();
  });

  it("the descriptor: xi-api-key, GET /v1/models, a restricted key's missing permission a failed test and not a disabled channel", () => {
    expect(ELEVENLABS.auth({ api_key: 'xi-1' }).headers()).toEqual({ 'xi-api-key': 'xi-1' });
    expect(ELEVENLABS.auth({}).headers()).toEqual({});
    const probe = ELEVENLABS.probe(['speech']);
    expect([probe.path, probe.notFoundPasses]).toEqual(['/v1/models', false]);
    expect(probe.refusal!(401, { detail: { status: 'missing_permissions', message: 'The API key you used is missing the permission models_read.' } })?.kind).toBe('request');
    expect(probe.refusal!(401, { detail: { status: 'quota_exceeded', message: 'quota' } })?.kind).toBe('account');
  });
});

describe("ElevenLabs' speech adapter against the ElevenLabs fake (the real UpstreamClient, no app)", () => {
  let fake: FakeElevenLabs;
  let account: VendorAccount;
  const vendor = new ElevenLabsSpeechVendor(loopbackUpstreamClient());
  beforeAll(async () => {
    fake = await startFakeElevenLabs('xi-adapter');
    account = { baseUrl: fake.url, auth: ELEVENLABS.auth({ api_key: 'xi-adapter' }) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it('answers MP3 where MP3 is asked and 24 kHz PCM otherwise; the fake received the mapped request', async () => {
    const mp3 = await vendor.create(account, create('eleven_multilingual_v2'));
    expect([mp3.format, mp3.sampleRate]).toEqual(['mp3', 44_100]);
    const pcm = await vendor.create(account, create('eleven_flash_v2_5', { format: 'flac', speed: 0.8 }));
    expect([pcm.format, pcm.sampleRate]).toEqual(['pcm', 24_000]);
    expect(await decodedSeconds(pcm.bytes, 'pcm', 24_000)).toBeGreaterThan(await decodedSeconds(mp3.bytes, 'mp3'));
    expect(fake.received.map((r) => [r.status, r.voiceId, r.outputFormat, r.body, r.stream])).toEqual([
      [200, 'JBFqnCBsd6RMkjVDRZzb', 'mp3_44100_128', { text, model_id: 'eleven_multilingual_v2' }, false],
      [200, 'JBFqnCBsd6RMkjVDRZzb', 'pcm_24000', { text, model_id: 'eleven_flash_v2_5', voice_settings: { speed: 0.8 } }, false],
    ]);
    expect([vendor.protocol, vendor.minPollS]).toEqual(['elevenlabs', 0]);
  });

  it("its failures as the relay reads them: 5xx and 429 busy, quota_exceeded the account's, a bad key the credentials', bad_prompt a content refusal, an unknown voice the request's", async () => {
    const failure = (c = create('eleven_turbo_v2_5'), on = account) => vendor.create(on, c).then(() => null, (err: unknown) => err);
    fake.knobs.serverError = 1;
    expect(await failure()).toBeInstanceOf(UpstreamBusy);
    fake.knobs.rateLimited = 1;
    expect(await failure()).toBeInstanceOf(UpstreamBusy);
    fake.knobs.quotaExceeded = true;
    expect(await failure()).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 401 });
    fake.knobs.quotaExceeded = false;
    expect(await failure(create('eleven_turbo_v2_5'), { baseUrl: fake.url, auth: ELEVENLABS.auth({ api_key: 'xi-wrong' }) })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth', status: 401 });
    fake.knobs.refusal = true;
    const refused = (await failure()) as UpstreamRefused;
    expect([refused.kind, refusesContent('elevenlabs', refused.message)]).toEqual(['request', true]);
    fake.knobs.refusal = false;
    expect(await failure(create('eleven_v3', { voice: { id: 'nobody' } }))).toMatchObject({ constructor: UpstreamRefused, kind: 'request', status: 404, message: 'A voice with the voice_id nobody was not found. (voice_not_found)' });
  });
});
