import { execFileSync } from 'node:child_process';
import OpenAI from 'openai';
import { PREMADE_VOICES, startFakeElevenLabs, type FakeElevenLabs } from '../support/vendors/elevenlabs/elevenlabs.fake.js';
import { startFakeGeminiSpeech, type FakeGeminiSpeech } from '../support/vendors/google/gemini-speech.fake.js';
import { startFakeOpenAISpeech, type FakeOpenAISpeech } from '../support/vendors/openai/openai-speech.fake.js';
import { probeContainer as probe, readerFfmpeg } from '../support/media.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const FORMATS = { mp3: 'mp3', opus: 'ogg', aac: 'aac', flac: 'flac', wav: 'wav' } as const;
const TEXT = 'The quick brown fox jumped over the lazy dog, and then it ran home.';

/** Server-sent events' data, parsed. */
function events(text: string): { type: string; audio?: string; usage?: unknown }[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)) as { type: string });
}

/**
 * OpenAI's speech door in the sandbox (offline): the official SDK gets decodable audio of about the text's
 * length in every response_format and the sse stream; the task, its audio and its cost are in GET /tasks; an
 * unknown voice and a 5,000-character input are 400s naming the field.
 */
describe('speech: the OpenAI door in the sandbox', () => {
  let t: TestApp;
  let key: string;
  let openai: OpenAI;

  beforeAll(async () => {
    t = await startTestApp({ SPEECH_PROVIDER: 'sandbox', PRICE_SPEECH_1K_CHARS: '2', HOLD_RECHECK_S: '3600' });
    key = await t.createKey('team-speech');
    openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
  }, 60_000);
  afterAll(() => t?.close());

  it.each(Object.keys(FORMATS) as (keyof typeof FORMATS)[])('answers decodable %s of about the text\'s length', async (format) => {
    const res = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: TEXT, voice: 'coral', response_format: format });
    const bytes = Buffer.from(await res.arrayBuffer());
    const { format: container, seconds } = probe(bytes);
    expect(container).toContain(FORMATS[format]);
    // 67 characters at 15 a second: about 4.5 s
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan(7);
  });

  it('answers pcm as raw 16-bit mono at 24 kHz, slower at speed 0.5', async () => {
    const normal = Buffer.from(await (await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: TEXT, voice: 'alloy', response_format: 'pcm' })).arrayBuffer());
    const slow = Buffer.from(await (await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: TEXT, voice: 'alloy', response_format: 'pcm', speed: 0.5 })).arrayBuffer());
    expect(normal.length % 2).toBe(0);
    const seconds = normal.length / 2 / 24_000;
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan(7);
    expect(slow.length).toBeGreaterThan(normal.length * 1.8);
    // decodes as what it says it is
    expect(execFileSync(readerFfmpeg(), ['-v', 'error', '-f', 's16le', '-ar', '24000', '-ac', '1', '-i', 'pipe:0', '-f', 'null', '-'], { input: normal }).length).toBe(0);
  });

  it('streams sse: speech.audio.delta events whose audio joins into the mp3, then speech.audio.done', async () => {
    const res = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: TEXT, voice: 'nova', stream_format: 'sse' });
    const list = events(await res.text());
    expect(list.at(-1)).toEqual({ type: 'speech.audio.done', usage: expect.objectContaining({ input_tokens: expect.any(Number) }) });
    const deltas = list.filter((e) => e.type === 'speech.audio.delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(probe(Buffer.concat(deltas.map((e) => Buffer.from(e.audio!, 'base64')))).format).toContain('mp3');
  });

  it('puts the task, its audio and its cost in GET /tasks', async () => {
    const input = 'x'.repeat(1500);
    // at speed 4, a quarter of the 100 s of audio to make (the sandbox's CPU, under a loaded run's contention)
    const res = await openai.audio.speech.create({ model: 'tts-1', input, voice: 'echo', response_format: 'wav', speed: 4 }).asResponse();
    const id = res.headers.get('x-task-id')!;
    // read whole: a body left unread holds its connection open, and the app's close waits on it
    expect(probe(Buffer.from(await res.arrayBuffer())).seconds).toBeGreaterThan(15);
    const task = await api(t.url, 'GET', `/tasks/${id}`, { key });
    expect([task.status, task.body.kind, task.body.state, task.body.credits]).toEqual([200, 'speech', 'succeeded', 4]);
    expect(task.body.record).toMatchObject({ object: 'speech', model: 'tts-1', voice: { name: 'echo' }, response_format: 'wav', input_chars: 1500 });
    expect(task.body.media).toEqual([expect.objectContaining({ role: 'audio', content_type: 'audio/wav' })]);
    const models = (await api(t.url, 'GET', '/models', { key })).body.models as { name: string; operation: string; voices?: string[] }[];
    expect(models.find((m) => m.operation === 'speech' && m.name === 'tts-1')?.voices).toContain('echo');
  });

  it('refuses an unknown voice and a 5,000-character input with 400s naming the field', async () => {
    const voice = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'Hello.', voice: 'nobody-at-all' }).catch((e: unknown) => e);
    expect(voice).toBeInstanceOf(OpenAI.BadRequestError);
    expect([(voice as InstanceType<typeof OpenAI.BadRequestError>).param, (voice as Error).message]).toEqual(['voice', expect.stringMatching(/voice: .*nobody-at-all.*alloy/)]);
    const long = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'a'.repeat(5000), voice: 'coral' }).catch((e: unknown) => e);
    expect(long).toBeInstanceOf(OpenAI.BadRequestError);
    expect([(long as InstanceType<typeof OpenAI.BadRequestError>).param, (long as Error).message]).toEqual(['input', expect.stringMatching(/input.*4096/)]);
    // at the boundary: 4,096 characters are taken (at speed 4: a quarter of the 4.5 minutes of audio to make and check)
    const edge = await openai.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'a '.repeat(2048), voice: 'coral', response_format: 'pcm', speed: 4 });
    // read whole, as every answer here (see above)
    const pcm = Buffer.from(await edge.arrayBuffer());
    expect([edge.status, pcm.length % 2]).toEqual([200, 0]);
    // 4,096 characters at 15 a second, four times as fast: about 68 s of 24 kHz 16-bit mono
    expect(pcm.length / 2 / 24_000).toBeGreaterThan(45);
    expect(pcm.length / 2 / 24_000).toBeLessThan(100);
    const instructions = await openai.audio.speech.create({ model: 'tts-1', input: 'Hello.', voice: 'alloy', instructions: 'Whisper.' }).catch((e: unknown) => e);
    expect([(instructions as InstanceType<typeof OpenAI.BadRequestError>).param, (instructions as Error).message]).toEqual(['instructions', expect.stringContaining('the model tts-1 does not take instructions')]);
  });

  it("reads the longest body a valid request makes (every character outside the BMP, escaped as JSON writes it): refused for its speed, not its size", async () => {
    // 4,096 + 4,096 characters of U+1F642, each as the 12 bytes of \ud83d\ude42: 98 kB
    const longest = `{"model": "gpt-4o-mini-tts", "voice": "coral", "speed": 9, "input": "${'\\ud83d\\ude42'.repeat(4096)}", "instructions": "${'\\ud83d\\ude42'.repeat(4096)}"}`;
    expect(longest.length).toBeGreaterThan(98_000);
    const read = await api(t.url, 'POST', '/openai/v1/audio/speech', { key, rawBody: longest, headers: { 'content-type': 'application/json' } });
    expect([read.status, read.body.error?.param]).toEqual([400, 'speed']);
  });
});

/**
 * The same request served in turn by OpenAI, ElevenLabs and Gemini (fakes from their documented shapes), each
 * receiving its own vocabulary (OpenAI's body, ElevenLabs' voice id in the path and model_id, Gemini's
 * speechConfig), the voice mapped per channel; a vendor failing fails over once to the next capable channel.
 */
describe('speech: OpenAI, ElevenLabs and Gemini behind the door', () => {
  let t: TestApp;
  let key: string;
  let openai: OpenAI;
  let oa: FakeOpenAISpeech;
  let el: FakeElevenLabs;
  let gm: FakeGeminiSpeech;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    [oa, el, gm] = await Promise.all([startFakeOpenAISpeech('sk-openai-speech-0123456789'), startFakeElevenLabs('el-key-0123456789'), startFakeGeminiSpeech('AIza-gemini-speech-0123456789')]);
    t = await startTestApp({ SPEECH_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
    key = await t.createKey('team-speech-relay');
    openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['speech'], ...body } });
      expect([name, res.status, res.body.message]).toEqual([name, 201, undefined]);
      ids[name] = res.body.id as string;
    };
    // one name callers use, "narrator", served by each vendor's model under it, its voice "host" mapped to each vendor's own
    await add('openai', { protocol: 'openai', base_url: oa.url, credentials: { api_key: 'sk-openai-speech-0123456789' }, priority: 3, models: [{ name: 'narrator', vendor_model: 'gpt-4o-mini-tts', voices: { host: 'coral' }, price: { per_1k_chars: 0.015 } }] });
    await add('elevenlabs', { protocol: 'elevenlabs', base_url: el.url, credentials: { api_key: 'el-key-0123456789' }, priority: 2, models: [{ name: 'narrator', vendor_model: 'eleven_multilingual_v2', voices: { host: Object.keys(PREMADE_VOICES)[0] }, price: { per_1k_chars: 0.1 } }] });
    await add('gemini', { protocol: 'gemini', base_url: gm.url, credentials: { api_key: 'AIza-gemini-speech-0123456789' }, priority: 1, models: [{ name: 'narrator', vendor_model: 'gemini-2.5-flash-preview-tts', voices: { host: 'Kore' } }] });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([oa?.close(), el?.close(), gm?.close()]);
  });

  const speak = async () => Buffer.from(await (await openai.audio.speech.create({ model: 'narrator', input: TEXT, voice: 'host', response_format: 'wav' })).arrayBuffer());
  const setEnabled = (name: string, on: boolean) => api(t.url, 'POST', `/admin/channels/${ids[name]}/${on ? 'enable' : 'disable'}`, { key: ADMIN });

  it('is served by each vendor in turn, each asked in its own words', async () => {
    expect(probe(await speak()).format).toContain('wav');
    expect(oa.received.at(-1)!.body).toMatchObject({ model: 'gpt-4o-mini-tts', input: TEXT, voice: 'coral' });
    await setEnabled('openai', false);
    expect(probe(await speak()).format).toContain('wav');
    expect(el.received.at(-1)).toMatchObject({ voiceId: Object.keys(PREMADE_VOICES)[0], body: expect.objectContaining({ text: TEXT, model_id: 'eleven_multilingual_v2' }) });
    await setEnabled('elevenlabs', false);
    expect(probe(await speak()).format).toContain('wav');
    expect(gm.received.at(-1)).toMatchObject({ model: 'gemini-2.5-flash-preview-tts', voices: ['Kore'] });
    await setEnabled('openai', true);
    await setEnabled('elevenlabs', true);
  });

  it('lists in GET /models the longest input a request may hold: the vendor\'s limit, or the door\'s 4,096 where the vendor takes more', async () => {
    const models = (await api(t.url, 'GET', '/models', { key })).body.models as { operation: string; vendor: string; max_input_chars: number }[];
    const longest = Object.fromEntries(models.filter((m) => m.operation === 'speech').map((m) => [m.vendor, m.max_input_chars]));
    // ElevenLabs' eleven_multilingual_v2 takes 10,000 characters, Gemini's 8,000: the door takes 4,096
    expect(longest).toEqual({ openai: 4096, elevenlabs: 4096, gemini: 4096 });
  });

  it("answers a vendor's audio made in the asked encoded format as it came (decoded whole first); WAV is written from its samples", async () => {
    const mp3 = Buffer.from(await (await openai.audio.speech.create({ model: 'narrator', input: TEXT, voice: 'host', response_format: 'mp3' })).arrayBuffer());
    const made = oa.received.at(-1)!;
    expect([made.format, made.audio!.length > 0]).toEqual(['mp3', true]);
    expect(mp3.equals(made.audio!)).toBe(true);
    const wav = await speak();
    expect([oa.received.at(-1)!.format, wav.equals(oa.received.at(-1)!.audio!), wav.subarray(0, 4).toString('latin1')]).toEqual(['wav', false, 'RIFF']);
  });

  it('fails over once when a vendor fails (its 5xx, a 200 that is not audio, audio that does not decode), charged once', async () => {
    const before = { oa: oa.received.length, el: el.received.length };
    oa.knobs.serverError = 1;
    expect(probe(await speak()).format).toContain('wav');
    expect([oa.received.length - before.oa, el.received.length - before.el]).toEqual([1, 1]);
    expect(oa.received.at(-1)!.status).toBe(500);
    // a 200 that is not audio (a JSON page where audio was asked) made nothing usable there either: on to the next
    oa.knobs.notAudio = 1;
    expect(probe(await speak()).format).toContain('wav');
    expect([oa.received.length - before.oa, el.received.length - before.el]).toEqual([2, 2]);
    expect(oa.received.at(-1)!.status).toBe(200);
    // FLAC whose header is whole and whose frames are garbage: it passes the answer's sniff, not the decode
    oa.knobs.damaged = 1;
    const usage = async () => (await api(t.url, 'GET', '/usage', { key })).body.operations.speech as { accepted: number; succeeded: number; credits_charged: number };
    const was = await usage();
    const flac = Buffer.from(await (await openai.audio.speech.create({ model: 'narrator', input: TEXT, voice: 'host', response_format: 'flac' })).arrayBuffer());
    expect([probe(flac).format, oa.received.length - before.oa, el.received.length - before.el]).toEqual([expect.stringContaining('flac'), 3, 3]);
    const now = await usage();
    // one task, succeeded, charged once (its price: one started thousand characters)
    expect([now.accepted - was.accepted, now.succeeded - was.succeeded, now.credits_charged - was.credits_charged > 0]).toEqual([1, 1, true]);
  });

  it("a voice id the vendor does not know is a 400 naming voice, in the vendor's words, whichever vendor serves it", async () => {
    const only = async (name: string, run: () => Promise<void>) => {
      for (const other of Object.keys(ids)) await setEnabled(other, other === name);
      try {
        await run();
      } finally {
        for (const other of Object.keys(ids)) await setEnabled(other, true);
      }
    };
    const refused = async (words: RegExp) => {
      const err = (await openai.audio.speech.create({ model: 'narrator', input: TEXT, voice: { id: 'voice-nobody-has' } }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect([err.constructor.name, err.status, err.param, err.message]).toEqual(['BadRequestError', 400, 'voice', expect.stringMatching(words)]);
    };
    await only('openai', () => refused(/^400 voice: .*Voice 'voice-nobody-has' not found/));
    await only('elevenlabs', async () => {
      await refused(/^400 voice: .*voice_id voice-nobody-has was not found/);
      // streamed: the same refusal with its status (the stream begins once the audio is whole), never a 200 whose events carry it
      const streamed = (await openai.audio.speech.create({ model: 'narrator', input: TEXT, voice: { id: 'voice-nobody-has' }, stream_format: 'sse' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect([streamed.constructor.name, streamed.status, streamed.param, streamed.message]).toEqual(['BadRequestError', 400, 'voice', expect.stringMatching(/^400 voice: .*was not found/)]);
    });
    await only('gemini', () => refused(/^400 voice: .*Voice voice-nobody-has is not supported/));
    // each vendor was asked once a request (a request it refused is not failed over, nor sent again)
    expect([oa, el, gm].map((f) => f.received.filter((r) => r.status === 400 || r.status === 404).length)).toEqual([1, 2, 1]);
  });

  it('a vendor failing where no other channel can take it: 502 at once in its words, the vendor asked once (not again until the deadline)', async () => {
    await setEnabled('elevenlabs', false);
    await setEnabled('gemini', false);
    const before = oa.received.length;
    oa.knobs.serverError = 1;
    const failed = (await openai.audio.speech.create({ model: 'narrator', input: TEXT, voice: 'host', response_format: 'wav' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect([failed.status, failed.message]).toEqual([502, expect.stringMatching(/the upstream failed \(HTTP 500\): .+/)]);
    expect(oa.received.slice(before).map((r) => r.status)).toEqual([500]);
    // the next request is served by the same channel: a failed generation is the task's, the channel stays in service
    expect(probe(await speak()).format).toContain('wav');
    await setEnabled('elevenlabs', true);
    await setEnabled('gemini', true);
  });

  it('serves a speech model the catalog does not know, declared by its channel: its voices, instructions and speeds; listed as declared', async () => {
    oa.knobs.released = ['gpt-5-mini-tts'];
    const declare = (spec: Record<string, unknown>, voices?: Record<string, string>) =>
      api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: `openai-next-${Object.keys(spec).length}-${voices ? 'v' : ''}`, operations: ['speech'], protocol: 'openai', base_url: oa.url, credentials: { api_key: 'sk-openai-speech-0123456789' }, models: [{ name: 'next-tts', vendor_model: 'gpt-5-mini-tts', spec, ...(voices ? { voices } : {}) }] } });
    // what it declares is checked, each refusal naming the field
    const noVoice = await declare({ instructions: true });
    expect([noVoice.status, noVoice.body.message]).toEqual([400, 'models[0].spec says of no voice the model speaks: list its voices, or set voice_ids (it takes any voice id of its vendor)']);
    const slow = await declare({ voices: ['coral'], speed: { min: 2, max: 4 } });
    expect([slow.status, slow.body.message]).toEqual([400, 'models[0].spec.speed must take 1 (the speed a request that asks none is made at): min at most 1, max at least 1 (not 2 to 4)']);
    const mapped = await declare({ voices: ['coral'] }, { host: 'verse' });
    expect([mapped.status, mapped.body.message]).toEqual([400, expect.stringMatching(/^models\[0\]\.voices\.host: gpt-5-mini-tts speaks only its own voices \(coral\)/)]);
    const added = await declare({ voices: ['coral', 'verse'], instructions: true, speed: { min: 0.5, max: 2 } }, { host: 'verse' });
    expect([added.status, added.body.message]).toEqual([201, undefined]);
    try {
      const listed = ((await api(t.url, 'GET', '/models', { key })).body.models as Record<string, unknown>[]).filter((m) => m.name === 'next-tts');
      expect(listed).toEqual([expect.objectContaining({ operation: 'speech', vendor: 'openai', vendor_model: 'gpt-5-mini-tts', declared: true, voices: ['coral', 'verse', 'host'], instructions: true, speed: [0.5, 2], max_input_chars: 4096 })]);
      const wav = Buffer.from(await (await openai.audio.speech.create({ model: 'next-tts', input: TEXT, voice: 'host', instructions: 'Warmly.', speed: 1.5, response_format: 'wav' })).arrayBuffer());
      expect(probe(wav).format).toContain('wav');
      expect(oa.received.at(-1)!.body).toMatchObject({ model: 'gpt-5-mini-tts', voice: 'verse', instructions: 'Warmly.', speed: 1.5 });
      // what it does not declare is refused before any vendor is asked
      const sent = oa.received.length;
      const fast = (await openai.audio.speech.create({ model: 'next-tts', input: TEXT, voice: 'coral', speed: 3 }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      const other = (await openai.audio.speech.create({ model: 'next-tts', input: TEXT, voice: 'nova' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect([fast.status, fast.param, other.status, other.param, oa.received.length]).toEqual([400, 'speed', 400, 'voice', sent]);
    } finally {
      expect((await api(t.url, 'DELETE', `/admin/channels/${added.body.id}`, { key: ADMIN })).status).toBe(200);
      oa.knobs.released = undefined;
    }
  });
});
