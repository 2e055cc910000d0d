import { ERROR_CODES } from '../../src/common/errors/app-error.js';
import { describeError } from '../../src/common/errors/error-catalog.js';
import { sunoapiErrorCode } from '../../src/common/errors/sunoapi-error.js';
import { askedParam, failureOf, recordStatus, type SunoapiMusicTask } from '../../src/doors/sunoapi/sunoapi-music.records.js';
import type { MusicParams } from '../../src/modules/music/music-task.js';
import { SUNOAPI_CODES, SUNOAPI_STATES } from '../support/vendors/sunoapi/sunoapi-bodies.js';

describe("the sunoapi.org family's words for an error (the /sunoapi/ door)", () => {
  const codeOf = (code: (typeof ERROR_CODES)[number]) => sunoapiErrorCode(describeError(code).status, describeError(code).name);

  it('answers their documented code for what they document: parameters, credentials, credits, frequency, limits, maintenance, server', () => {
    expect(codeOf('INVALID_PARAMETER')).toBe(SUNOAPI_CODES.badRequest);
    expect(codeOf('INVALID_REQUEST')).toBe(SUNOAPI_CODES.badRequest);
    for (const auth of ['AUTH_FAILED', 'AUTH_MISSING', 'AUTH_MALFORMED', 'AUTH_REVOKED'] as const) expect(codeOf(auth)).toBe(SUNOAPI_CODES.unauthorized);
    expect(codeOf('NOT_FOUND')).toBe(SUNOAPI_CODES.notFound);
    expect(codeOf('METHOD_NOT_ALLOWED')).toBe(SUNOAPI_CODES.notFound); // their 404 is "method or path"
    expect(codeOf('CREDITS_EXHAUSTED')).toBe(SUNOAPI_CODES.noCredits);
    expect(codeOf('RATE_LIMITED')).toBe(SUNOAPI_CODES.tooFrequent);
    expect(codeOf('AUTH_THROTTLED')).toBe(SUNOAPI_CODES.tooFrequent);
    expect(codeOf('CONCURRENCY_LIMITED')).toBe(SUNOAPI_CODES.overLimit);
    expect(codeOf('PAYLOAD_TOO_LARGE')).toBe(SUNOAPI_CODES.tooLong);
    expect(codeOf('UNAVAILABLE')).toBe(SUNOAPI_CODES.maintenance);
    expect(codeOf('INTERNAL')).toBe(SUNOAPI_CODES.serverError);
    expect(codeOf('TIMEOUT')).toBe(SUNOAPI_CODES.serverError);
  });

  it('keeps its own status as the code where they document none, and never answers 200 for an error', () => {
    expect(codeOf('FORBIDDEN')).toBe(403);
    expect(codeOf('GONE')).toBe(410);
    for (const code of ERROR_CODES) expect(codeOf(code)).not.toBe(200);
  });
});

const params = (over: Partial<MusicParams> = {}): MusicParams & { door: string } => ({
  door: 'sunoapi',
  lyrics: null,
  description: null,
  style: null,
  avoid_style: null,
  title: null,
  model: null,
  instrumental: false,
  duration_s: null,
  clip_ids: ['c1', 'c2'],
  continues: null,
  ...over,
});

describe("a music task in the sunoapi.org family's record", () => {
  it('reports PENDING, TEXT_SUCCESS while it runs, SUCCESS; a failure as a content refusal or a failed generation, each one of their states', () => {
    expect(recordStatus({ state: 'queued', message: null })).toBe('PENDING');
    expect(recordStatus({ state: 'running', message: null })).toBe('TEXT_SUCCESS');
    expect(recordStatus({ state: 'succeeded', message: null })).toBe('SUCCESS');
    expect(recordStatus({ state: 'failed', message: 'the vendor refused: content flagged as inappropriate' })).toBe('SENSITIVE_WORD_ERROR');
    expect(recordStatus({ state: 'failed', message: 'the upstream failed to make the song' })).toBe('GENERATE_AUDIO_FAILED');
    for (const state of ['queued', 'running', 'succeeded', 'failed'] as const) expect(SUNOAPI_STATES).toContain(recordStatus({ state, message: 'x' }));
  });

  it("codes a failure as their callbacks do: 400 a content refusal, 408 timed out, 531 else (refunded); none unless failed", () => {
    expect(failureOf({ state: 'failed', message: 'content flagged by moderation' })).toEqual({ code: 400, message: 'content flagged by moderation' });
    expect(failureOf({ state: 'failed', message: 'timed out: the music task did not finish within 600 s' })?.code).toBe(408);
    expect(failureOf({ state: 'failed', message: 'the upstream failed' })?.code).toBe(531);
    expect(failureOf({ state: 'failed', message: null })).toEqual({ code: 531, message: 'failed' });
    expect(failureOf({ state: 'succeeded', message: null })).toBeNull();
  });

  it("renders what was asked in each create's names", () => {
    const task = (p: MusicParams & { door: string }, callbackUrl: string | null = null) => ({ params: p, callbackUrl }) as Pick<SunoapiMusicTask, 'params' | 'callbackUrl'>;
    expect(askedParam(task(params({ lyrics: 'la', style: 'pop', title: 'T', avoid_style: 'metal', model: 'V4_5' }), 'https://h/x'))).toEqual({
      customMode: true,
      instrumental: false,
      model: 'V4_5',
      prompt: 'la',
      style: 'pop',
      title: 'T',
      negativeTags: 'metal',
      callBackUrl: 'https://h/x',
    });
    expect(askedParam(task(params({ description: 'a song', instrumental: true })))).toEqual({ customMode: false, instrumental: true, prompt: 'a song' });
    const continues = { clip_id: 'k1', at_s: 5, from_upload: false, upstream_clip_id: null, channel_id: null };
    expect(askedParam(task(params({ lyrics: 'la', style: 'pop', title: 'T', continues })))).toEqual({ audioId: 'k1', defaultParamFlag: true, continueAt: 5, prompt: 'la', style: 'pop', title: 'T' });
    expect(askedParam(task(params({ continues })))).toEqual({ audioId: 'k1', defaultParamFlag: false });
    expect(askedParam(task(params({ style: 'ambient', title: 'F', instrumental: true, continues: { ...continues, from_upload: true } })))).toEqual({ defaultParamFlag: true, instrumental: true, continueAt: 5, style: 'ambient', title: 'F' });
  });
});
