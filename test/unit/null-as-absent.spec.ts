import { AppValidationPipe } from '../../src/common/validation/app-validation.pipe.js';
import { CreateExpandTaskDto } from '../../src/doors/kling/dto/create-expand-task.dto.js';
import { CreateKlingImageDto } from '../../src/doors/kling/dto/create-kling-image.dto.js';
import { CreateKlingImageToVideoDto, CreateKlingTextToVideoDto } from '../../src/doors/kling/dto/kling-video.dto.js';
import { CreateGenerationDto } from '../../src/doors/luma/dto/create-generation.dto.js';
import { CreateOpenAiImageDto } from '../../src/doors/openai/dto/openai-image.dto.js';
import { CreateOpenAiSpeechDto } from '../../src/doors/openai/dto/openai-speech.dto.js';
import { CreateOpenAiVideoDto } from '../../src/doors/openai/dto/openai-video.dto.js';
import { ElevenLabsComposeMusicDto } from '../../src/doors/elevenlabs/dto/elevenlabs-music.dto.js';
import { UpdateChannelDto } from '../../src/modules/channels/dto/channel.dto.js';

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
  ] as const)('%s: its nulls are gone before its rules', async (_door, metatype, body) => {
    const read_ = await read(metatype as unknown as new () => object, body);
    expect(Object.entries(read_).filter(([, v]) => v === null)).toEqual([]);
  });

  it('the expand route (the spec) likewise; the admin API keeps null, which clears a setting there', async () => {
    expect((await read(CreateExpandTaskDto, { image: 'https://example.com/a.png', up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, callback_url: null })).callback_url).toBeUndefined();
    expect((await read(UpdateChannelDto, { max_running: null })).max_running).toBeNull();
  });
});
