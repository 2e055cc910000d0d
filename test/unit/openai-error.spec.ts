import { AppError, ERROR_CODES, type ParamRule } from '../../src/common/errors/app-error.js';
import { describeError } from '../../src/common/errors/error-catalog.js';
import { openAiApiOf, openAiError } from '../../src/common/errors/openai-error.js';
import { AppValidationPipe } from '../../src/common/validation/app-validation.pipe.js';
import { CreateOpenAiImageDto } from '../../src/doors/openai/dto/openai-image.dto.js';
import { CreateOpenAiSpeechDto } from '../../src/doors/openai/dto/openai-speech.dto.js';
import { SubmitLyricsDto } from '../../src/doors/suno/dto/submit-lyrics.dto.js';

/** The OpenAI door's wording of a domain error, as the global filter gives it. */
function worded(err: AppError) {
  const wire = describeError(err.code);
  return openAiError(wire.status, wire.name, err.message, err.fault);
}

describe("OpenAI's words for an error (the /openai/ doors)", () => {
  it("answers a refused parameter with OpenAI's own code for the rule it broke, and the parameter as param", () => {
    const cases: [ParamRule, boolean | undefined, string][] = [
      ['missing', undefined, 'missing_required_parameter'],
      ['type', undefined, 'invalid_type'],
      ['value', undefined, 'invalid_value'],
      ['below_min', true, 'integer_below_min_value'],
      ['below_min', false, 'decimal_below_min_value'],
      ['above_max', true, 'integer_above_max_value'],
      ['above_max', false, 'decimal_above_max_value'],
      ['too_long', undefined, 'string_above_max_length'],
      ['empty', undefined, 'empty_string'],
      ['too_many', undefined, 'array_above_max_length'],
    ];
    for (const [rule, integer, code] of cases) {
      const error = worded(AppError.invalidParameter('n must be a whole number from 1 to 10', { param: 'n', rule, integer }));
      expect([rule, integer, error]).toEqual([rule, integer, { message: 'n must be a whole number from 1 to 10', type: 'invalid_request_error', code, param: 'n' }]);
    }
  });

  it('reads a refusal without a known rule as invalid_value, its param the field the message names first', () => {
    expect(worded(new AppError('INVALID_PARAMETER', 'size: no configured OpenAI model makes this size (333x333)'))).toEqual(expect.objectContaining({ code: 'invalid_value', param: 'size' }));
    expect(worded(new AppError('INVALID_PARAMETER', 'image[1] must be a PNG, JPEG or WebP file'))).toEqual(expect.objectContaining({ code: 'invalid_value', param: 'image[1]' }));
    expect(worded(new AppError('INVALID_PARAMETER', 'input_reference.image_url is not reachable'))).toEqual(expect.objectContaining({ param: 'input_reference.image_url' }));
    expect(worded(new AppError('INVALID_PARAMETER', 'Give a prompt'))).toEqual(expect.objectContaining({ code: 'invalid_value', param: null }));
  });

  it("uses OpenAI's codes for refused keys, rate limits and quota; the catalog's names where OpenAI has none", () => {
    const codes = Object.fromEntries(ERROR_CODES.map((c) => [c, worded(new AppError(c, 'x'))]));
    for (const c of ['AUTH_FAILED', 'AUTH_MISSING', 'AUTH_MALFORMED', 'AUTH_REVOKED'] as const) expect([c, codes[c].type, codes[c].code]).toEqual([c, 'authentication_error', 'invalid_api_key']);
    expect([codes.RATE_LIMITED.code, codes.CONCURRENCY_LIMITED.code, codes.RATE_LIMITED.type]).toEqual(['rate_limit_exceeded', 'rate_limit_exceeded', 'rate_limit_error']);
    expect([codes.CREDITS_EXHAUSTED.type, codes.CREDITS_EXHAUSTED.code]).toEqual(['insufficient_quota', 'insufficient_quota']);
    // a refused prompt is the Images API's own type there, invalid_request_error on speech and video
    expect([codes.CONTENT_REFUSED.type, codes.CONTENT_REFUSED.code]).toEqual(['invalid_request_error', 'moderation_blocked']);
    const refused = describeError('CONTENT_REFUSED');
    expect(openAiError(refused.status, refused.name, 'x', undefined, openAiApiOf('/openai/v1/images/generations')).type).toBe('image_generation_user_error');
    expect(['/openai/v1/images/edits', '/openai/v1/audio/speech', '/openai/v1/videos'].map(openAiApiOf)).toEqual(['images', 'other', 'other']);
    expect([codes.NOT_FOUND.code, codes.TIMEOUT.code, codes.INTERNAL.type, codes.AUTH_THROTTLED.code]).toEqual(['not_found', 'timeout', 'server_error', 'too_many_auth_failures']);
    // never the spec's numeric code, never invalid_parameter
    expect(Object.values(codes).map((e) => e.code)).not.toContain('invalid_parameter');
  });
});

describe('the parameter and rule of a refused body (AppValidationPipe)', () => {
  const pipe = new AppValidationPipe();
  const faultOf = async (body: Record<string, unknown>) => {
    try {
      await pipe.transform(body, { type: 'body', metatype: CreateOpenAiImageDto });
    } catch (err) {
      return [(err as AppError).code, (err as AppError).fault];
    }
    throw new Error(`accepted: ${JSON.stringify(body)}`);
  };

  it('names the first refused field and its rule, whatever else its message says', async () => {
    const cases: [Record<string, unknown>, { param: string; rule: ParamRule; integer?: boolean }][] = [
      [{}, { param: 'prompt', rule: 'missing' }],
      [{ prompt: null }, { param: 'prompt', rule: 'missing' }],
      [{ prompt: '' }, { param: 'prompt', rule: 'empty' }],
      [{ prompt: 7 }, { param: 'prompt', rule: 'type' }],
      [{ prompt: 'p'.repeat(32_001) }, { param: 'prompt', rule: 'too_long' }],
      [{ prompt: 'x', n: 0 }, { param: 'n', rule: 'below_min', integer: true }],
      [{ prompt: 'x', n: 11 }, { param: 'n', rule: 'above_max', integer: true }],
      [{ prompt: 'x', n: 2.5 }, { param: 'n', rule: 'type' }],
      [{ prompt: 'x', n: '3' }, undefined as never],
      [{ prompt: 'x', quality: 'ultra' }, { param: 'quality', rule: 'value' }],
      [{ prompt: 'x', size: '333 by 333' }, { param: 'size', rule: 'value' }],
      [{ prompt: 'x', stream: 'yes' }, { param: 'stream', rule: 'type' }],
    ];
    for (const [body, fault] of cases) {
      if (fault === undefined) {
        // a multipart number as text: read as the number, accepted
        await expect(pipe.transform(body, { type: 'body', metatype: CreateOpenAiImageDto })).resolves.toEqual(expect.objectContaining({ n: 3 }));
        continue;
      }
      expect([body, await faultOf(body)]).toEqual([body, ['INVALID_PARAMETER', fault]]);
    }
  });

  it("codes a bound by the parameter's declared type, as OpenAI does: a whole 5 for speed (a number) is decimal_above_max_value", async () => {
    const speechFault = async (speed: unknown) => {
      const err = await pipe.transform({ model: 'tts-1', input: 'x', voice: 'alloy', speed }, { type: 'body', metatype: CreateOpenAiSpeechDto }).catch((e: AppError) => e);
      return (err as AppError).fault;
    };
    expect(await speechFault(5)).toEqual({ param: 'speed', rule: 'above_max', integer: false });
    expect(await speechFault(4.5)).toEqual({ param: 'speed', rule: 'above_max', integer: false });
    expect(await speechFault(0)).toEqual({ param: 'speed', rule: 'below_min', integer: false });
    expect(await speechFault(4)).toBeUndefined();
    expect(await speechFault(0.25)).toBeUndefined();
    const worded = (fault: unknown) => openAiError(400, 'invalid_parameter', 'speed must be a number from 0.25 to 4', fault as never).code;
    expect([worded(await speechFault(5)), worded(await speechFault(0))]).toEqual(['decimal_above_max_value', 'decimal_below_min_value']);
    // n is declared a whole number: its bounds stay integer_…
    expect(worded(await faultOf({ prompt: 'x', n: 11 }).then((f) => f[1]))).toBe('integer_above_max_value');
  });

  it('tells each refused field one rule: its required rule when missing, else its type rule alone, else every rule it broke', async () => {
    const message = async (body: Record<string, unknown>, metatype: new () => unknown) => {
      const err = await pipe.transform(body, { type: 'body', metatype }).then(() => undefined, (e: AppError) => e);
      return err?.message;
    };
    const speech = { model: 'tts-1', voice: 'alloy', input: 'x' };
    // missing (or null, which OpenAI's bodies read as absent): required, with what its type rule asks; of another
    // type: the type rule alone (its pattern presupposes a string)
    expect(await message({ voice: 'alloy', input: 'x' }, CreateOpenAiSpeechDto)).toBe('model is required: it must be a string naming a speech model GET /models lists');
    expect(await message({ model: 'tts-1', voice: 'alloy' }, CreateOpenAiSpeechDto)).toBe('input is required: it must be a string');
    expect(await message({ ...speech, input: null }, CreateOpenAiSpeechDto)).toBe('input is required: it must be a string');
    expect(await message({ ...speech, input: 7 }, CreateOpenAiSpeechDto)).toBe('input must be a string');
    // a string breaking its pattern: that rule
    expect(await message({ ...speech, input: '   ' }, CreateOpenAiSpeechDto)).toBe('input must not be empty or blank');
    // a field with a required rule (@IsDefined) is told it when missing
    expect(await message({}, SubmitLyricsDto)).toMatch(/^prompt is required: what the lyrics are about$/);
    // two fields: one message each, joined
    expect(await message({ ...speech, model: 5, input: 7 }, CreateOpenAiSpeechDto)).toBe('model must be a string naming a speech model GET /models lists; input must be a string');
  });

  it('keeps the message free of the refused value', async () => {
    await expect(pipe.transform({ prompt: 'x', quality: 'secret-value-xyz' }, { type: 'body', metatype: CreateOpenAiImageDto })).rejects.toThrow(/^quality must be one of auto, low, medium, high$/);
  });
});
