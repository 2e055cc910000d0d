import { AppValidationPipe } from '../../src/common/validation/app-validation.pipe.js';
import { AppError } from '../../src/common/errors/app-error.js';
import { describeError } from '../../src/common/errors/error-catalog.js';
import { elevenLabsError, elevenLabsStatus } from '../../src/common/errors/elevenlabs-error.js';
import { ElevenLabsComposeMusicDto } from '../../src/doors/elevenlabs/dto/elevenlabs-music.dto.js';
import { assertComposable, composedSong, planLyrics } from '../../src/doors/elevenlabs/elevenlabs-music.mapping.js';
import { compositionPlanOf, lyricSections } from '../../src/vendors/elevenlabs/elevenlabs-music.vendor.js';

// ElevenLabs' door: its body checked at each bound, mapped into the music task's words, and its errors in ElevenLabs' shape.

const pipe = new AppValidationPipe();
const body = (value: unknown) => pipe.transform(value, { type: 'body', metatype: ElevenLabsComposeMusicDto }) as Promise<ElevenLabsComposeMusicDto>;
const refused = async (value: unknown): Promise<AppError> => {
  try {
    await body(value);
  } catch (err) {
    return err as AppError;
  }
  throw new Error('taken');
};
const section = (over: Record<string, unknown> = {}) => ({ section_name: 'Verse', positive_local_styles: [], negative_local_styles: [], duration_ms: 3_000, lines: ['a line'], ...over });
const plan = (sections: unknown[], over: Record<string, unknown> = {}) => ({ composition_plan: { positive_global_styles: [], negative_global_styles: [], sections, ...over } });

describe("ElevenLabs' music door: the body", () => {
  it('takes music_length_ms from 3,000 to 600,000 and refuses 2,999, 600,001 and 3,000.5, naming it', async () => {
    for (const ms of [3_000, 600_000]) expect((await body({ prompt: 'x', music_length_ms: ms })).music_length_ms).toBe(ms);
    for (const ms of [2_999, 600_001, 3_000.5]) expect((await refused({ prompt: 'x', music_length_ms: ms })).fault?.param).toBe('music_length_ms');
  });

  it('takes a prompt of 4,100 characters and refuses 4,101; a section line of 200 and not 201; a section of 3 s to 120 s', async () => {
    await body({ prompt: 'é'.repeat(4_100) });
    expect((await refused({ prompt: 'é'.repeat(4_101) })).fault?.param).toBe('prompt');
    await body(plan([section({ lines: ['x'.repeat(200)] })]));
    expect((await refused(plan([section({ lines: ['x'.repeat(201)] })]))).fault?.param).toBe('composition_plan.sections.0.lines');
    await body(plan([section({ duration_ms: 120_000 })]));
    expect((await refused(plan([section({ duration_ms: 120_001 })]))).fault?.param).toBe('composition_plan.sections.0.duration_ms');
    expect((await refused(plan([section({ duration_ms: 2_999 })]))).fault?.param).toBe('composition_plan.sections.0.duration_ms');
  });

  it('refuses neither or both of prompt and composition_plan, a prompt\'s fields with a plan, and a plan of less than 3 s or more than 10 minutes in all', async () => {
    const check = async (value: unknown) => {
      try {
        assertComposable(await body(value));
        return null;
      } catch (err) {
        return (err as AppError).fault?.param;
      }
    };
    expect(await check({})).toBe('prompt');
    expect(await check({ prompt: 'x', ...plan([section()]) })).toBe('composition_plan');
    expect(await check({ ...plan([section()]), music_length_ms: 3_000 })).toBe('music_length_ms');
    expect(await check({ ...plan([section()]), force_instrumental: false })).toBe('force_instrumental');
    expect(await check(plan([]))).toBe('composition_plan.sections');
    expect(await check(plan(Array.from({ length: 5 }, () => section({ duration_ms: 120_000 }))))).toBeNull(); // 600 s
    expect(await check(plan([...Array.from({ length: 5 }, () => section({ duration_ms: 120_000 })), section()]))).toBe('composition_plan.sections'); // 603 s
    expect(await check({ prompt: 'x', force_instrumental: true, music_length_ms: 3_000 })).toBeNull();
  });
});

describe("ElevenLabs' music door: into the music task's words", () => {
  it('maps a prompt into the description, its length into seconds, force_instrumental into instrumental', async () => {
    expect(composedSong(await body({ prompt: 'A folk song', music_length_ms: 7_500, force_instrumental: true }))).toEqual({ lyrics: null, description: 'A folk song', style: null, avoid_style: null, instrumental: true, duration_s: 7.5 });
    expect(composedSong(await body({ prompt: 'A folk song' }))).toEqual(expect.objectContaining({ instrumental: false, duration_s: null }));
  });

  it("maps a plan's lines into [Section]-tagged lyrics (local styles in the tag, avoided ones as \"no …\"), its global styles into style and avoid_style, its sections' sum into the length", async () => {
    const dto = await body(
      plan(
        [
          section({ section_name: 'Verse 1', positive_local_styles: ['soft', 'piano'], duration_ms: 4_000, lines: ['Morning light', 'On the bay'] }),
          section({ section_name: 'Chorus', negative_local_styles: ['drums'], duration_ms: 5_500, lines: ['Hold the tide'] }),
          section({ section_name: 'Outro', duration_ms: 3_000, lines: [] }),
        ],
        { positive_global_styles: ['lo-fi', ' calm '], negative_global_styles: ['metal'] },
      ),
    );
    const song = composedSong(dto);
    expect(song).toEqual({ lyrics: '[Verse 1: soft, piano]\nMorning light\nOn the bay\n\n[Chorus: no drums]\nHold the tide\n\n[Outro]', description: null, style: 'lo-fi, calm', avoid_style: 'metal', instrumental: false, duration_s: 12.5 });
    // ElevenLabs' own adapter reads those lyrics back into the same sections and styles
    expect(lyricSections(song.lyrics!)).toEqual([
      { name: 'Verse 1', styles: ['soft', 'piano'], lines: ['Morning light', 'On the bay'] },
      { name: 'Chorus', styles: ['no drums'], lines: ['Hold the tide'] },
      { name: 'Outro', styles: [], lines: [] },
    ]);
    expect(compositionPlanOf({ ...song, avoidStyle: song.avoid_style, title: null, model: 'music_v1', durationS: song.duration_s, continues: null }).positive_global_styles).toEqual(['lo-fi', 'calm']);
  });

  it('makes a plan that sings no line an instrumental, and one that sings a line not', async () => {
    expect(composedSong(await body(plan([section({ lines: [] }), section({ lines: ['  '] })]))).instrumental).toBe(true);
    expect(composedSong(await body(plan([section({ lines: [] }), section({ lines: ['la'] })]))).instrumental).toBe(false);
    expect(planLyrics((await body(plan([section({ lines: [] })]))).composition_plan!)).toBe('[Verse]');
  });
});

describe("ElevenLabs' door: its errors", () => {
  it('answers a refused field as a 422 validation list, its loc in the query when the query holds it', () => {
    const wire = describeError('INVALID_PARAMETER');
    expect(elevenLabsStatus(wire)).toBe(422);
    expect(elevenLabsError(wire, 'INVALID_PARAMETER', 'composition_plan.sections.0.lines must hold lines of at most 200 characters each', { param: 'composition_plan.sections.0.lines', rule: 'value' })).toEqual({
      detail: [{ type: 'value_error', loc: ['body', 'composition_plan', 'sections', 0, 'lines'], msg: 'composition_plan.sections.0.lines must hold lines of at most 200 characters each' }],
    });
    expect(elevenLabsError(wire, 'INVALID_PARAMETER', 'output_format must be one of …', { param: 'output_format', rule: 'value' }, ['output_format']).detail).toEqual([expect.objectContaining({ loc: ['query', 'output_format'] })]);
    // a models' refusal names its field at the start of the message
    expect(elevenLabsError(wire, 'INVALID_PARAMETER', 'music_length_ms: no configured model makes this duration of 700 s', undefined).detail).toEqual([expect.objectContaining({ loc: ['body', 'music_length_ms'], type: 'value_error' })]);
    expect(elevenLabsError(describeError('INVALID_REQUEST'), 'INVALID_REQUEST', 'Request body must be a JSON object', undefined).detail).toEqual([{ type: 'json_invalid', loc: ['body'], msg: 'Request body must be a JSON object' }]);
  });

  it('lists each refused field as an item of its own, as FastAPI does, when the message names each', () => {
    const wire = describeError('INVALID_PARAMETER');
    const message = 'music_length_ms must not be less than 3000; output_format must be one of mp3_44100_128, …; prompt must be a string';
    expect(elevenLabsError(wire, 'INVALID_PARAMETER', message, { param: 'music_length_ms', rule: 'below_min', integer: true }, ['output_format']).detail).toEqual([
      { type: 'greater_than_equal', loc: ['body', 'music_length_ms'], msg: 'music_length_ms must not be less than 3000' },
      { type: 'value_error', loc: ['query', 'output_format'], msg: 'output_format must be one of mp3_44100_128, …' },
      { type: 'value_error', loc: ['body', 'prompt'], msg: 'prompt must be a string' },
    ]);
    // the fault's path as class-validator gives it (a.0.b) is the message's a[0].b
    const nested = elevenLabsError(wire, 'INVALID_PARAMETER', 'composition_plan.sections[0].lines must hold lines; prompt must be a string', { param: 'composition_plan.sections.0.lines', rule: 'too_many' }).detail as { type: string }[];
    expect(nested.map((d) => d.type)).toEqual(['too_long', 'value_error']);
    // a part that names no field: the message stays one item, on the first fault's field
    expect(elevenLabsError(wire, 'INVALID_PARAMETER', 'prompt must be a string; and something else', { param: 'prompt', rule: 'type' }).detail).toEqual([{ type: 'type_error', loc: ['body', 'prompt'], msg: 'prompt must be a string; and something else' }]);
  });

  it("answers anything else as {detail: {status, message}} in ElevenLabs' words, with the catalog's status", () => {
    expect([elevenLabsStatus(describeError('AUTH_FAILED')), elevenLabsError(describeError('AUTH_FAILED'), 'AUTH_FAILED', 'API key is not valid', undefined)]).toEqual([401, { detail: { status: 'invalid_api_key', message: 'API key is not valid' } }]);
    expect(elevenLabsError(describeError('AUTH_MISSING'), 'AUTH_MISSING', 'm', undefined)).toEqual({ detail: { status: 'needs_authorization', message: 'm' } });
    expect(elevenLabsError(describeError('CONTENT_REFUSED'), 'CONTENT_REFUSED', 'm', undefined)).toEqual({ detail: { status: 'bad_prompt', message: 'm' } });
    expect([elevenLabsStatus(describeError('UPSTREAM_FAILED')), elevenLabsError(describeError('UPSTREAM_FAILED'), 'UPSTREAM_FAILED', 'm', undefined)]).toEqual([502, { detail: { status: 'upstream_failed', message: 'm' } }]);
  });
});
