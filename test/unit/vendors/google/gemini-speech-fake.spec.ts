import { ApiError, GoogleGenAI } from '@google/genai';
import { type FakeGeminiSpeech, startFakeGeminiSpeech } from '../../../support/vendors/google/gemini-speech.fake.js';
import { decodedSeconds, spokenSeconds } from '../../../support/vendors/speech-audio.js';

/**
 * The Gemini speech fake is what Google's own SDK expects: `models.generateContent` with `responseModalities:
 * ["AUDIO"]` and a speech config reads 24 kHz PCM inline, decodable, about as long as the text takes spoken; the
 * body it sends is Google's words; its refusals are the SDK's ApiError with Google's status. No gateway: the SDK
 * and the fake alone.
 */
describe("the Gemini speech fake, driven by Google's SDK", () => {
  let fake: FakeGeminiSpeech;
  let ai: GoogleGenAI;
  const client = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: fake.server.url, fetch: (input, init) => fetch(input, init) } });
  const speech = { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } } };
  beforeAll(async () => {
    fake = await startFakeGeminiSpeech('AIza-test-speech');
    ai = client('AIza-test-speech');
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it("the guide's single-speaker example: 24 kHz 16-bit PCM inline, decodable, about the spoken length; the body in Google's words", async () => {
    const res = await ai.models.generateContent({ model: 'gemini-2.5-flash-preview-tts', contents: [{ parts: [{ text: 'Say cheerfully: Have a wonderful day!' }] }], config: speech });
    const inline = res.candidates![0].content!.parts![0].inlineData!;
    expect(inline.mimeType).toBe('audio/L16;codec=pcm;rate=24000');
    const pcm = Buffer.from(inline.data!, 'base64');
    expect(Math.abs((await decodedSeconds(pcm, 'pcm', 24_000)) - spokenSeconds('Say cheerfully: Have a wonderful day!'))).toBeLessThan(0.05);
    expect([res.candidates![0].finishReason, res.usageMetadata?.candidatesTokensDetails?.[0].modality]).toEqual(['STOP', 'AUDIO']);
    // the SDK moves config into generationConfig
    expect(fake.received).toEqual([
      {
        model: 'gemini-2.5-flash-preview-tts',
        body: { contents: [{ parts: [{ text: 'Say cheerfully: Have a wonderful day!' }] }], generationConfig: speech },
        voices: ['Kore'],
        text: 'Say cheerfully: Have a wonderful day!',
        status: 200,
        seconds: spokenSeconds('Say cheerfully: Have a wonderful day!'),
      },
    ]);
  });

  it("the guide's two speakers (multiSpeakerVoiceConfig) on the pro model", async () => {
    const res = await ai.models.generateContent({
      model: 'gemini-2.5-pro-preview-tts',
      contents: 'TTS the following conversation between Joe and Jane:\nJoe: How are you today Jane?\nJane: Not too bad, how about you?',
      config: {
        responseModalities: ['AUDIO'],
        speechConfig: {
          multiSpeakerVoiceConfig: {
            speakerVoiceConfigs: [
              { speaker: 'Joe', voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Kore' } } },
              { speaker: 'Jane', voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Puck' } } },
            ],
          },
        },
      },
    });
    expect(res.candidates![0].content!.parts![0].inlineData!.data!.length).toBeGreaterThan(1000);
    expect(fake.received.map((r) => [r.model, r.voices, r.status])).toEqual([['gemini-2.5-pro-preview-tts', ['Kore', 'Puck'], 200]]);
  });

  it("refuses as Google does: the SDK's ApiError with Google's code; a blocked prompt and a candidate without content under 200", async () => {
    const refused = (request: Parameters<GoogleGenAI['models']['generateContent']>[0], with_ = ai) =>
      with_.models.generateContent(request).then(
        () => null,
        (err: unknown) => (err instanceof ApiError ? [err.status, (JSON.parse(err.message) as { error: { status: string } }).error.status] : err),
      );
    expect(await refused({ model: 'gemini-2.5-flash-preview-tts', contents: 'Hello', config: { ...speech, responseModalities: ['TEXT'] } })).toEqual([400, 'INVALID_ARGUMENT']);
    expect(await refused({ model: 'gemini-2.5-flash-preview-tts', contents: 'Hello', config: { ...speech, speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'alloy' } } } } })).toEqual([400, 'INVALID_ARGUMENT']);
    expect(await refused({ model: 'gemini-2.5-flash', contents: 'Hello', config: speech })).toEqual([404, 'NOT_FOUND']);
    expect(await refused({ model: 'gemini-2.5-flash-preview-tts', contents: 'Hello', config: speech }, client('AIza-wrong'))).toEqual([400, 'INVALID_ARGUMENT']);
    expect(fake.authFailures).toEqual(['AIza-wrong']);
    Object.assign(fake.knobs, { serverError: 1, rateLimited: 1 });
    expect(await refused({ model: 'gemini-2.5-flash-preview-tts', contents: 'Hello', config: speech })).toEqual([500, 'INTERNAL']);
    expect(await refused({ model: 'gemini-2.5-flash-preview-tts', contents: 'Hello', config: speech })).toEqual([429, 'RESOURCE_EXHAUSTED']);
    fake.knobs.blocked = true;
    const blocked = await ai.models.generateContent({ model: 'gemini-2.5-flash-preview-tts', contents: 'Hello', config: speech });
    expect([blocked.promptFeedback?.blockReason, blocked.candidates]).toEqual(['PROHIBITED_CONTENT', undefined]);
    Object.assign(fake.knobs, { blocked: false, finishOther: 1 });
    const empty = await ai.models.generateContent({ model: 'gemini-2.5-flash-preview-tts', contents: 'Hello', config: speech });
    expect([empty.candidates![0].finishReason, empty.candidates![0].content, empty.data]).toEqual(['OTHER', undefined, undefined]);
  });
});
