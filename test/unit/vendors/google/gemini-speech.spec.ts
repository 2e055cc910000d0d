import { UpstreamBusy, UpstreamRefused, UpstreamGenerationFailed } from '../../../../src/infra/relay/upstream-client.js';
import type { SpeechCreate, SpeechRequest } from '../../../../src/vendors/contracts/speech-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { GEMINI_DEFAULT_VOICES, GEMINI_SPEECH_MODELS, GEMINI_VOICES, GeminiSpeechVendor, geminiAudioOf, geminiPromptOf, geminiSpeechBody } from '../../../../src/vendors/google/gemini-speech.vendor.js';
import { GOOGLE } from '../../../../src/vendors/google/google.vendor.js';
import { OPENAI_VOICES } from '../../../../src/vendors/openai/openai-speech.vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { type FakeGeminiSpeech, startFakeGeminiSpeech } from '../../../support/vendors/google/gemini-speech.fake.js';
import { decodedSeconds, spokenSeconds } from '../../../support/vendors/speech-audio.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const model = (id: string) => GEMINI_SPEECH_MODELS.find((m) => m.id === id)!;
const request = (over: Partial<SpeechRequest> = {}): SpeechRequest => ({ model: null, input: 'Have a wonderful day!', voice: { name: 'marin' }, instructions: null, format: 'wav', speed: 1, ...over });
const create = (id: string, over: Partial<SpeechRequest> = {}): SpeechCreate => {
  const r = request(over);
  return { model: model(id), request: r, voiceId: 'name' in r.voice ? model(id).voices[r.voice.name] : r.voice.id };
};
/** A generateContent answer as Google's guide shows it: the audio as the first part's inlineData. */
const spoken = (data: string, mimeType = 'audio/L16;codec=pcm;rate=24000') => ({ candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType, data } }] }, finishReason: 'STOP', index: 0 }] });

describe("Gemini's speech: the request's mapping", () => {
  it("the guide's single-speaker example: the text in one user turn, AUDIO only, a prebuilt voice by name", () => {
    expect(geminiSpeechBody(create('gemini-2.5-flash-preview-tts', { instructions: 'Say cheerfully' }))).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Say cheerfully: Have a wonderful day!' }] }],
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } },
    });
  });

  it("instructions lead the prompt as the guide steers a voice, their last stop giving way to one colon; none: the input alone", () => {
    expect(geminiPromptOf('Have a wonderful day!', 'Speak in a cheerful and positive tone.')).toBe('Speak in a cheerful and positive tone: Have a wonderful day!');
    expect(geminiPromptOf('Hello.', '  Say in a spooky whisper:  ')).toBe('Say in a spooky whisper: Hello.');
    expect(geminiPromptOf('Hello.', null)).toBe('Hello.');
    expect(geminiPromptOf('Hello.', ' . ')).toBe('Hello.');
  });

  it('a voice asked by its id is sent by that name', () => {
    expect(geminiSpeechBody(create('gemini-2.5-pro-preview-tts', { voice: { id: 'Zubenelgenubi' } })).generationConfig.speechConfig.voiceConfig.prebuiltVoiceConfig.voiceName).toBe('Zubenelgenubi');
  });

  it("the catalog: both models map all thirteen of OpenAI's voice names onto its 30 voices, take instructions and voice ids, no speed", () => {
    expect(GEMINI_VOICES).toHaveLength(30);
    expect(Object.keys(GEMINI_DEFAULT_VOICES).sort()).toEqual([...OPENAI_VOICES].sort());
    for (const voice of Object.values(GEMINI_DEFAULT_VOICES)) expect(GEMINI_VOICES).toContain(voice);
    for (const m of GEMINI_SPEECH_MODELS) expect([m.id, m.instructions, m.voiceIds, m.speed]).toEqual([m.id, true, true, null]);
  });
});

describe("Gemini's speech answer, read (geminiAudioOf)", () => {
  it('the first inlineData: 16-bit PCM at the rate its mimeType says (24 kHz when it says none)', () => {
    const pcm = Buffer.alloc(4800, 1);
    expect(geminiAudioOf(spoken(pcm.toString('base64')), 200)).toEqual({ bytes: pcm, format: 'pcm', sampleRate: 24_000 });
    expect(geminiAudioOf(spoken(pcm.toString('base64'), 'audio/L16;codec=pcm;rate=16000'), 200).sampleRate).toBe(16_000);
    expect(geminiAudioOf(spoken(pcm.toString('base64'), 'audio/pcm'), 200).sampleRate).toBe(24_000);
    // a text part before it is passed over
    const withText = { candidates: [{ content: { parts: [{ text: 'Here it is' }, { inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000', data: pcm.toString('base64') } }] } }] };
    expect(geminiAudioOf(withText, 200).bytes).toEqual(pcm);
  });

  it("a blocked prompt or a SAFETY finish is a content refusal, by the descriptor's words", () => {
    const read = (json: Record<string, unknown>) => {
      try {
        geminiAudioOf(json, 200);
        return null;
      } catch (err) {
        return err instanceof UpstreamRefused ? [err.kind, err.message, refusesContent('gemini', err.message)] : err;
      }
    };
    expect(read({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } })).toEqual(['request', "the upstream's safety filters blocked the prompt (blockReason PROHIBITED_CONTENT)", true]);
    expect(read({ candidates: [{ finishReason: 'SAFETY', finishMessage: 'Unsafe.' }] })).toEqual(['request', "the upstream's safety filters refused the speech (finishReason SAFETY): Unsafe.", true]);
  });

  it('no audio is an unusable answer naming the field it lacks and the finish reason; a malformed answer names its field', () => {
    const read = (json: Record<string, unknown>) => {
      try {
        geminiAudioOf(json, 200);
        return null;
      } catch (err) {
        return err instanceof UnusableAnswer ? [err.message, refusesContent('gemini', err.message)] : err;
      }
    };
    expect(read({ candidates: [{ finishReason: 'OTHER', index: 0 }] })).toEqual(['the upstream answered without audio: no candidates[0].content.parts (finishReason OTHER)', false]);
    expect(read({})).toEqual(['the upstream answered without audio: no candidates[0] (finishReason none)', false]);
    expect(read({ candidates: [{ content: { parts: [{ text: 'I cannot read that aloud.' }] }, finishReason: 'STOP' }] })).toEqual(['the upstream answered without audio: no candidates[0].content.parts[0].inlineData (finishReason STOP): I cannot read that aloud.', false]);
    expect((read({ candidates: [{ content: { parts: [{ inlineData: { mimeType: 'audio/L16;codec=pcm;rate=24000' } }] } }] }) as string[])[0]).toMatch(/^the upstream's answer is not Gemini's: candidates\[0\]\.content\.parts\[0\]\.inlineData\.data expected string/);
    expect((read({ candidates: 'none' }) as string[])[0]).toMatch(/^the upstream's answer is not Gemini's: candidates expected array/);
    expect(read(spoken(Buffer.from('abc').toString('base64')))).toEqual(["the upstream's candidates[0].content.parts[0].inlineData.data is 3 bytes, not 16-bit PCM", false]);
    expect(read(spoken('AAAA', 'audio/mpeg'))).toEqual(["the upstream's candidates[0].content.parts[0].inlineData.mimeType is audio/mpeg, not 16-bit PCM (audio/L16)", false]);
  });
});

describe("Gemini's speech adapter against the Gemini speech fake (the real UpstreamClient, no app)", () => {
  let fake: FakeGeminiSpeech;
  let account: VendorAccount;
  const vendor = new GeminiSpeechVendor(loopbackUpstreamClient());
  beforeAll(async () => {
    fake = await startFakeGeminiSpeech('AIza-adapter');
    account = { baseUrl: fake.url, auth: GOOGLE.auth({ api_key: 'AIza-adapter' }) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it('answers 24 kHz PCM about as long as the prompt takes spoken; the fake received the mapped body', async () => {
    const audio = await vendor.create(account, create('gemini-2.5-flash-preview-tts', { instructions: 'Say cheerfully' }));
    expect([audio.format, audio.sampleRate]).toEqual(['pcm', 24_000]);
    expect(await decodedSeconds(audio.bytes, 'pcm', 24_000)).toBeCloseTo(spokenSeconds('Say cheerfully: Have a wonderful day!'), 1);
    expect(fake.received.map((r) => [r.status, r.model, r.voices, r.text])).toEqual([[200, 'gemini-2.5-flash-preview-tts', ['Kore'], 'Say cheerfully: Have a wonderful day!']]);
    expect([vendor.protocol, vendor.minPollS]).toEqual(['gemini', GOOGLE.pollFloorS]);
  });

  it("its failures as the relay reads them: 500 and 429 busy, a bad key the credentials', a blocked prompt a content refusal, a candidate without content a failed generation (another channel may make it), an unknown voice the request's", async () => {
    const failure = (c = create('gemini-2.5-pro-preview-tts'), on = account) => vendor.create(on, c).then(() => null, (err: unknown) => err);
    fake.knobs.serverError = 1;
    expect(await failure()).toBeInstanceOf(UpstreamBusy);
    fake.knobs.rateLimited = 1;
    expect(await failure()).toBeInstanceOf(UpstreamBusy);
    expect(await failure(create('gemini-2.5-pro-preview-tts'), { baseUrl: fake.url, auth: GOOGLE.auth({ api_key: 'AIza-wrong' }) })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth' });
    fake.knobs.blocked = true;
    const refused = (await failure()) as UpstreamRefused;
    expect([refused.kind, refusesContent('gemini', refused.message)]).toEqual(['request', true]);
    fake.knobs.blocked = false;
    fake.knobs.finishOther = 1;
    expect(await failure()).toMatchObject({ constructor: UpstreamGenerationFailed, answer: { status: 200 }, message: 'the upstream answered without audio: no candidates[0].content.parts (finishReason OTHER)' });
    expect(await failure(create('gemini-2.5-pro-preview-tts', { voice: { id: 'alloy' } }))).toMatchObject({ constructor: UpstreamRefused, kind: 'request', status: 400 });
  });
});
