import { ApiError, GoogleGenAI } from '@google/genai';
import { type FakeGemini, startFakeGemini } from '../../../support/vendors/google/gemini.fake.js';
import { decodedSeconds, probedAudio } from '../../../support/vendors/speech-audio.js';

/**
 * The Gemini fake's Lyria 3 is what Google's own SDK expects: the music generation guide's `models.generateContent`
 * calls read the lyrics as a text part and the song as an inline MP3 part (48 kHz stereo, decodable, 30 s from
 * the clip model), the pro model's WAV where asked; the body the SDK sends is Google's words; what Lyria does not
 * take is the SDK's ApiError with Google's status. No gateway: the SDK and the fake alone.
 */
describe("the Gemini fake's Lyria 3, driven by Google's SDK", () => {
  let fake: FakeGemini;
  let ai: GoogleGenAI;
  beforeAll(async () => {
    fake = await startFakeGemini('AIza-test-lyria');
    ai = new GoogleGenAI({ apiKey: 'AIza-test-lyria', httpOptions: { baseUrl: fake.url, fetch: (input, init) => fetch(input, init) } });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it("the guide's clip example: the lyrics as text and a 30 s 48 kHz stereo MP3 inline; the body in Google's words", async () => {
    const contents = 'Create a 30-second cheerful acoustic folk song with guitar and harmonica.';
    const res = await ai.models.generateContent({ model: 'lyria-3-clip-preview', contents, config: { responseModalities: ['AUDIO', 'TEXT'] } });
    const parts = res.candidates![0].content!.parts!;
    expect(parts.map((p) => (p.text !== undefined ? 'text' : p.inlineData?.mimeType))).toEqual(['text', 'audio/mpeg']);
    expect(parts[0].text).toMatch(/^\[Verse 1\]\n/);
    const mp3 = Buffer.from(parts[1].inlineData!.data!, 'base64');
    expect(await decodedSeconds(mp3, 'mp3')).toBeCloseTo(30, 0);
    expect(await probedAudio(mp3)).toEqual({ channels: 2, sampleRate: 48_000 });
    expect([res.candidates![0].finishReason, res.usageMetadata?.candidatesTokensDetails?.[0].modality]).toEqual(['STOP', 'AUDIO']);
    // the SDK sends the string as one user turn and moves config into generationConfig
    expect(fake.received.map((r) => [r.model, r.body, r.song])).toEqual([
      ['lyria-3-clip-preview', { contents: [{ parts: [{ text: contents }], role: 'user' }], generationConfig: { responseModalities: ['AUDIO', 'TEXT'] } }, { seconds: 30, mimeType: 'audio/mpeg', text: parts[0].text }],
    ]);
  });

  it('the pro model: as long as the prompt asks, WAV where responseMimeType asks it; no modalities: audio and its text; AUDIO alone: no text', async () => {
    const wav = await ai.models.generateContent({ model: 'lyria-3-pro-preview', contents: 'A 40-second orchestral piece, instrumental only.', config: { responseModalities: ['AUDIO', 'TEXT'], responseMimeType: 'audio/wav' } });
    const inline = wav.candidates![0].content!.parts!.find((p) => p.inlineData)!.inlineData!;
    expect(inline.mimeType).toBe('audio/wav');
    expect(await decodedSeconds(Buffer.from(inline.data!, 'base64'), 'wav')).toBeCloseTo(40, 1);
    const plain = await ai.models.generateContent({ model: 'lyria-3-pro-preview', contents: 'A 30-second jingle' });
    expect(plain.candidates![0].content!.parts!.map((p) => (p.text !== undefined ? 'text' : p.inlineData?.mimeType))).toEqual(['text', 'audio/mpeg']);
    const audioOnly = await ai.models.generateContent({ model: 'lyria-3-clip-preview', contents: 'A jingle', config: { responseModalities: ['AUDIO'] } });
    expect(audioOnly.candidates![0].content!.parts!.map((p) => p.inlineData?.mimeType)).toEqual(['audio/mpeg']);
    const lyrics = await ai.models.generateContent({ model: 'lyria-3-clip-preview', contents: 'Upbeat pop.\n\nLyrics:\n[Chorus]\nSunshine on the water', config: { responseModalities: ['AUDIO', 'TEXT'] } });
    expect(lyrics.candidates![0].content!.parts![0].text).toBe('[Chorus]\nSunshine on the water');
    expect(fake.received.map((r) => r.song?.seconds)).toEqual([40, 30, 30, 30]);
  });

  it("refuses what Lyria does not take, as Google does: the SDK's ApiError with Google's code; a blocked prompt and a refused song under 200", async () => {
    const refused = (request: Parameters<GoogleGenAI['models']['generateContent']>[0]) =>
      ai.models.generateContent(request).then(
        () => null,
        (err: unknown) => (err instanceof ApiError ? [err.status, (JSON.parse(err.message) as { error: { status: string } }).error.status] : err),
      );
    expect(await refused({ model: 'lyria-3-clip-preview', contents: 'A jingle', config: { responseModalities: ['TEXT'] } })).toEqual([400, 'INVALID_ARGUMENT']);
    expect(await refused({ model: 'lyria-3-clip-preview', contents: 'A jingle', config: { responseModalities: ['AUDIO', 'IMAGE'] } })).toEqual([400, 'INVALID_ARGUMENT']);
    expect(await refused({ model: 'lyria-3-clip-preview', contents: 'A jingle', config: { responseMimeType: 'audio/wav' } })).toEqual([400, 'INVALID_ARGUMENT']);
    expect(await refused({ model: 'lyria-3-pro-preview', contents: [{ role: 'user', parts: [{ text: 'A song' }] }, { role: 'model', parts: [{ text: 'Here' }] }, { role: 'user', parts: [{ text: 'Faster' }] }] })).toEqual([400, 'INVALID_ARGUMENT']);
    expect(await refused({ model: 'lyria-realtime-exp', contents: 'A jingle' })).toEqual([404, 'NOT_FOUND']);
    Object.assign(fake.knobs, { serverError: 1 });
    expect(await refused({ model: 'lyria-3-clip-preview', contents: 'A jingle' })).toEqual([500, 'INTERNAL']);
    fake.knobs.blockPrompt = true;
    expect((await ai.models.generateContent({ model: 'lyria-3-clip-preview', contents: 'A jingle' })).promptFeedback?.blockReason).toBe('PROHIBITED_CONTENT');
    fake.knobs.blockPrompt = false;
    fake.knobs.refuse = true;
    const res = await ai.models.generateContent({ model: 'lyria-3-clip-preview', contents: 'A jingle' });
    expect([res.candidates![0].finishReason, res.candidates![0].content]).toEqual(['SAFETY', undefined]);
  });
});
