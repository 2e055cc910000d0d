import { AppError } from '../../src/common/errors/app-error.js';
import { type OfferedSpeechModel, speechRefusal } from '../../src/modules/speech/speech-models.js';
import type { SpeechRequest } from '../../src/vendors/contracts/speech-vendor.js';
import { OPENAI_SPEECH_MODELS } from '../../src/vendors/openai/openai-speech.vendor.js';

/**
 * The speech door's refusals of what no configured model makes: each names the field as OpenAI's door names
 * it, and says what the named model does not do, or that no model does, on both sides of each rule. No app.
 */
const offered: OfferedSpeechModel[] = OPENAI_SPEECH_MODELS.map((spec) => ({ name: spec.id, vendor: 'openai', spec }));
const LABELS = { model: 'model', voice: 'voice', input: 'input', instructions: 'instructions', speed: 'speed' };
const ask = (over: Partial<SpeechRequest>): SpeechRequest => ({ model: 'tts-1', input: 'Hello there.', voice: { name: 'alloy' }, instructions: null, format: 'mp3', speed: 1, ...over });
/** The refusal's param and message; undefined when a model makes it. */
const refused = (over: Partial<SpeechRequest>): [string | undefined, string] | undefined => {
  const err = speechRefusal(offered, ask(over), LABELS);
  if (!err) return undefined;
  expect(err).toBeInstanceOf(AppError);
  return [err.fault?.param, err.message];
};

describe('speech refusals', () => {
  it('instructions: refused for a model that takes none, saying it does not; taken by one that does', () => {
    expect(refused({ instructions: 'Speak softly.' })).toEqual(['instructions', 'instructions: the model tts-1 does not take instructions (the models that do: gpt-4o-mini-tts, gpt-4o-mini-tts-2025-12-15)']);
    expect(refused({ model: 'gpt-4o-mini-tts', instructions: 'Speak softly.' })).toBeUndefined();
  });

  it('speed: 0.25 to 4 taken, 4.01 and 0.24 refused naming the named model', () => {
    expect(refused({ speed: 4 })).toBeUndefined();
    expect(refused({ speed: 0.25 })).toBeUndefined();
    expect(refused({ speed: 4.01 })).toEqual(['speed', 'speed: the model tts-1 does not speak at 4.01; from 0.25 to 4']);
    expect(refused({ speed: 0.24 })).toEqual(['speed', 'speed: the model tts-1 does not speak at 0.24; from 0.25 to 4']);
  });

  it('with no model named, says that no configured model does', () => {
    expect(refused({ model: null, voice: { name: 'nobody' } })?.[1]).toMatch(/^voice: no configured speech model speaks the voice nobody; the voices: alloy, /);
    expect(refused({ model: null, speed: 5 })).toEqual(['speed', 'speed: no configured speech model speaks at 5; from 0.25 to 4']);
  });

  it('voice and model: a voice the model does not speak, a model nobody serves', () => {
    expect(refused({ voice: { name: 'marin' } })?.[1]).toMatch(/^voice: the model tts-1 does not speak the voice marin; the voices: /);
    expect(refused({ voice: { name: 'marin' }, model: 'gpt-4o-mini-tts' })).toBeUndefined();
    expect(refused({ model: 'tts-2' })?.[1]).toMatch(/^model: no configured speech model is named tts-2 \(the models: gpt-4o-mini-tts, .*tts-1, tts-1-hd\)$/);
  });
});
