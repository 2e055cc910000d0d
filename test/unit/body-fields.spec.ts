import { AppValidationPipe } from '../../src/common/validation/app-validation.pipe.js';
import { CreateExpandTaskDto } from '../../src/doors/kling/dto/create-expand-task.dto.js';
import { CreateKlingImageDto } from '../../src/doors/kling/dto/create-kling-image.dto.js';
import { CreateKlingImageToVideoDto, CreateKlingTextToVideoDto } from '../../src/doors/kling/dto/kling-video.dto.js';
import { CreateGenerationDto } from '../../src/doors/luma/dto/create-generation.dto.js';
import { CreateOpenAiImageDto } from '../../src/doors/openai/dto/openai-image.dto.js';
import { CreateOpenAiSpeechDto } from '../../src/doors/openai/dto/openai-speech.dto.js';
import { CreateOpenAiVideoDto } from '../../src/doors/openai/dto/openai-video.dto.js';
import { ElevenLabsComposeMusicDto } from '../../src/doors/elevenlabs/dto/elevenlabs-music.dto.js';
import { SubmitMusicDto } from '../../src/doors/suno/dto/submit-music.dto.js';
import { SunoapiGenerateDto } from '../../src/doors/sunoapi/dto/sunoapi-generate.dto.js';
import { CreateChannelDto, UpdateChannelDto } from '../../src/modules/channels/dto/channel.dto.js';

/** shared.md: "null in an optional field means the same as leaving it out", on every door's create body; the admin API's PATCH keeps null (it clears a setting). */
describe('a JSON null in a door body is the field left out', () => {
  const pipe = new AppValidationPipe();
  const read = (metatype: new () => object, body: object) => pipe.transform(body, { type: 'body', metatype, data: '' }) as Promise<Record<string, unknown>>;

  it.each([
    ['OpenAI video', CreateOpenAiVideoDto, { prompt: 'a fox', model: null, seconds: null, size: null }],
    ['Luma', CreateGenerationDto, { prompt: 'a fox', model: null, aspect_ratio: null, resolution: null, duration: null }],
    ['Kling text2video', CreateKlingTextToVideoDto, { prompt: 'a fox', model_name: null, aspect_ratio: null, duration: null }],
    ['Kling image2video', CreateKlingImageToVideoDto, { image: 'https://example.com/a.png', model_name: null, image_tail: null }],
    ['Kling image', CreateKlingImageDto, { prompt: 'a fox', model_name: null, aspect_ratio: null }],
    ['OpenAI image', CreateOpenAiImageDto, { prompt: 'a fox', model: null, n: null, size: null }],
    ['OpenAI speech', CreateOpenAiSpeechDto, { model: 'tts-1', input: 'hi', voice: 'alloy', speed: null, instructions: null }],
    ['ElevenLabs music', ElevenLabsComposeMusicDto, { prompt: 'a song', music_length_ms: null, composition_plan: null }],
    ['Suno-style music', SubmitMusicDto, { gpt_description_prompt: 'a song', mv: null, tags: null }],
    ['sunoapi.org-style generate', SunoapiGenerateDto, { customMode: false, instrumental: false, prompt: 'a song', style: null, model: null, callBackUrl: 'https://example.com/cb' }],
  ] as const)('%s: its nulls are gone before its rules', async (_door, metatype, body) => {
    const read_ = await read(metatype as unknown as new () => object, body);
    expect(Object.entries(read_).filter(([, v]) => v === null)).toEqual([]);
  });

  it('the expand route (the spec) likewise; the admin API keeps null, which clears a setting there', async () => {
    expect((await read(CreateExpandTaskDto, { image: 'https://example.com/a.png', up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, callback_url: null })).callback_url).toBeUndefined();
    expect((await read(UpdateChannelDto, { max_running: null })).max_running).toBeNull();
  });
});

describe("the admin API's bodies refuse a field they do not know, at any depth, naming it", () => {
  const pipe = new AppValidationPipe();
  const refusal = (metatype: new () => object, body: object) =>
    (pipe.transform(body, { type: 'body', metatype, data: '' }) as Promise<unknown>).then(
      () => '',
      (err: Error) => err.message,
    );
  const channel = { name: 'c', protocol: 'seedance', operations: ['video'], base_url: 'https://ark.example.com', credentials: { api_key: 'k' } };

  it('a misspelt field of a channel, of a model, of its price, of its credentials', async () => {
    expect(await refusal(CreateChannelDto, channel)).toBe('');
    expect(await refusal(CreateChannelDto, { ...channel, priorty: 5 })).toBe('priorty is not a field of this body (a misspelt or unknown field is refused, never ignored)');
    expect(await refusal(CreateChannelDto, { ...channel, models: [{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528', prise: { per_second: { '*': 1 } } }] })).toBe('models[0].prise is not a field of this body (a misspelt or unknown field is refused, never ignored)');
    expect(await refusal(CreateChannelDto, { ...channel, models: [{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528', price: { per_minute: 1 } }] })).toBe('models[0].price.per_minute is not a field of this body (a misspelt or unknown field is refused, never ignored)');
    expect(await refusal(CreateChannelDto, { ...channel, credentials: { apiKey: 'k' } })).toBe('credentials.apiKey is not a field of this body (a misspelt or unknown field is refused, never ignored)');
    expect(await refusal(UpdateChannelDto, { status: 'disabled' })).toBe('status is not a field of this body (a misspelt or unknown field is refused, never ignored)');
    expect(await refusal(UpdateChannelDto, { weight: 3 })).toBe('');
    // the masked value GET answers, written back, would replace the key with the mask
    expect(await refusal(UpdateChannelDto, { credentials: { api_key: '…cdef' } })).toBe('credentials.api_key is the masked value the API answers (…cdef): send the real key, or leave credentials out to keep it');
    // what JSON.parse makes own fields and class-transformer passes over
    expect(await refusal(UpdateChannelDto, JSON.parse('{"__proto__": {"x": 1}}'))).toBe('__proto__ is not a field of this body (a misspelt or unknown field is refused, never ignored)');
    expect(await refusal(CreateChannelDto, JSON.parse(JSON.stringify({ ...channel, models: [{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528', price: { constructor: { a: 1 } } }] })))).toBe('models[0].price.constructor is not a field of this body (a misspelt or unknown field is refused, never ignored)');
  });

  it("a door's body still drops what it does not know (an SDK newer than the door may send it)", async () => {
    expect(await refusal(CreateOpenAiVideoDto, { prompt: 'a fox', some_new_field: 1 })).toBe('');
  });
});
