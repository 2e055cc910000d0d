import { UpstreamBusy, UpstreamRefused, UpstreamUnavailable } from '../../../../src/infra/relay/upstream-client.js';
import { type MusicAsk, type MusicRequest, unmetMusicFields } from '../../../../src/vendors/contracts/music-vendor.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { refusesContent, vendorOf } from '../../../../src/vendors/registry.js';
import { MUSIC_VENDORS } from '../../../../src/vendors/music-vendors.js';
import { SUNOAPI_MODELS } from '../../../../src/vendors/sunoapi/sunoapi-models.js';
import { SUNOAPI_NO_CALLBACK, SunoapiMusicVendor, sunoapiMusicCall, sunoapiRecordStatus, sunoapiSubmitted, sunoapiTitle } from '../../../../src/vendors/sunoapi/sunoapi-music.vendor.js';
import { checkSunoapiAnswer, SUNOAPI, sunoapiRefusal } from '../../../../src/vendors/sunoapi/sunoapi.vendor.js';
import { sunoapiCreated, sunoapiErrorCallback, sunoapiRecordInfo, sunoapiStageCallback, type SunoapiTrack } from '../../../support/vendors/sunoapi/sunoapi-bodies.js';

const song = (over: Partial<MusicRequest> = {}): MusicRequest => ({ lyrics: null, description: null, style: null, avoidStyle: null, title: null, model: 'V4_5', instrumental: false, durationS: null, continues: null, ...over });
const track = (n: number, over: Partial<SunoapiTrack> = {}): SunoapiTrack => ({
  id: `8551-${n}`,
  audioUrl: `https://cdn.example/${n}.mp3`,
  streamAudioUrl: `https://cdn.example/stream/${n}`,
  imageUrl: `https://cdn.example/${n}.jpeg`,
  prompt: '[Verse] Night city lights shining bright',
  modelName: 'chirp-auk',
  title: 'Iron Man',
  tags: 'electrifying, rock',
  createTime: '2025-01-01 00:00:00',
  duration: 198.44,
  ...over,
});
const recordOf = (status: Parameters<typeof sunoapiRecordInfo>[0]['status'], tracks: SunoapiTrack[], failure: { errorCode: number | null; errorMessage: string | null } = { errorCode: null, errorMessage: null }) =>
  sunoapiRecordInfo({ taskId: '5c79be8e', param: { prompt: 'A calm piano track', customMode: true, instrumental: true, model: 'V4_5' }, status, type: 'GENERATE', parentMusicId: '', tracks, ...failure });

describe('sunoapi: the descriptor', () => {
  it('is the sunoapi protocol for music, a Bearer api_key, tested by its credit balance', () => {
    expect(vendorOf('sunoapi')).toBe(SUNOAPI);
    expect([SUNOAPI.operations, SUNOAPI.credentials, SUNOAPI.baseUrl.example]).toEqual([['music', 'lyrics', 'stems'], ['api_key'], 'https://api.sunoapi.org']);
    expect(SUNOAPI.auth({ api_key: 'k-1' }).headers()).toEqual({ authorization: 'Bearer k-1' });
    expect(SUNOAPI.probe(['music'])).toMatchObject({ path: '/api/v1/generate/credit', notFoundPasses: false });
    expect(MUSIC_VENDORS).toContain(SunoapiMusicVendor);
    expect([SunoapiMusicVendor.protocol, new SunoapiMusicVendor(null as never).minPollS]).toEqual(['sunoapi', SUNOAPI.pollFloorS]);
  });

  it("its probe fails only on refused credentials or credit; a balance, busy or a refused parameter passes", () => {
    const check = SUNOAPI.probe(['music']).check!;
    expect(() => check({ code: 200, msg: 'success', data: 100 })).not.toThrow();
    expect(() => check({ code: 430, msg: 'Your call frequency is too high.' })).not.toThrow();
    expect(() => check({ code: 400, msg: 'bad' })).not.toThrow();
    expect(() => check({ code: 401, msg: 'You do not have access permissions' })).toThrow(expect.objectContaining({ kind: 'auth' }));
    expect(() => check({ code: 429, msg: 'The current credits are insufficient.' })).toThrow(expect.objectContaining({ kind: 'account' }));
  });

  it('declares V3_5 to V5 with their documented limits: two MP3 takes, no duration, both continuations', () => {
    expect(SUNOAPI_MODELS.map((m) => [m.id, m.lyricsMax, m.styleMax, m.titleMax, m.descriptionMax])).toEqual([
      ['V3_5', 3000, 200, 80, 500],
      ['V4', 3000, 200, 80, 500],
      ['V4_5', 5000, 1000, 100, 500],
      ['V4_5PLUS', 5000, 1000, 100, 500],
      ['V5', 5000, 1000, 100, 500],
    ]);
    for (const m of SUNOAPI_MODELS) expect(m).toMatchObject({ takes: 2, durationS: null, format: 'mp3', lyrics: true, description: true, instrumental: true, continueOwn: true, continueUpload: true });
  });

  it('a sensitive-word task, or words of copyright, read as content refusals; a failed generation does not', () => {
    expect(refusesContent('sunoapi', 'content contains prohibited words (SENSITIVE_WORD_ERROR)')).toBe(true);
    expect(refusesContent('sunoapi', 'Lyrics contained copyrighted material (GENERATE_AUDIO_FAILED, code 400)')).toBe(true);
    expect(refusesContent('sunoapi', 'failed to generate music tracks (GENERATE_AUDIO_FAILED, code 501)')).toBe(false);
  });
});

describe("sunoapi: its answers' codes", () => {
  const thrown = (json: Record<string, unknown>, create = false) => {
    try {
      checkSunoapiAnswer(json, create);
    } catch (err) {
      return err as Error;
    }
    return null;
  };

  it('200, or no code, is no refusal', () => {
    expect([thrown({ code: 200, msg: 'success' }), thrown({ data: 1 })]).toEqual([null, null]);
  });

  it('401 and 403 refuse the credentials; 402 and a 429 of insufficient credits the account', () => {
    expect(thrown({ code: 401, msg: 'You do not have access permissions' })).toEqual(new UpstreamRefused('You do not have access permissions (code 401)', 401, 'auth'));
    expect(thrown({ code: 403, msg: 'forbidden' })).toMatchObject({ kind: 'auth' });
    expect(thrown({ code: 429, msg: 'The current credits are insufficient. Please top up.' })).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 402 });
    expect(thrown({ code: 429, msg: '积分不足' })).toMatchObject({ kind: 'account' });
    expect(thrown({ code: 402, msg: 'Insufficient Credits' })).toMatchObject({ kind: 'account' });
  });

  it("405, 430, a 429 that is a rate limit (kie.ai's) and 455 maintenance are busy: nothing taken", () => {
    for (const [code, msg] of [[405, 'Calls over the limit'], [430, 'Your call frequency is too high. Please try again later.'], [429, 'Rate limited'], [455, 'System maintenance']] as const) {
      const err = thrown({ code, msg });
      expect([code, err instanceof UpstreamBusy, (err as UpstreamBusy).answer]).toEqual([code, true, { status: 200, code }]);
    }
    expect(thrown({ code: 455, msg: 'maintenance' })?.message).toBe('the upstream is under maintenance: maintenance (code 455)');
  });

  it('500 and above failed there: a create may have acted, a query not', () => {
    const create = thrown({ code: 500, msg: 'Server exception' }, true) as UpstreamUnavailable;
    expect([create instanceof UpstreamBusy, create.ambiguous, create.message]).toEqual([false, true, 'the upstream failed: Server exception (code 500)']);
    expect((thrown({ code: 531, msg: 'x' }) as UpstreamUnavailable).ambiguous).toBe(false);
  });

  it('400, 404, 413, 422 and the rest refuse the request in their words', () => {
    expect(thrown({ code: 413, msg: 'Theme or prompt too long' })).toEqual(new UpstreamRefused('Theme or prompt too long (code 413)', 413, 'request'));
    expect(thrown({ code: 422, msg: 'Please enter callBackUrl.' })).toMatchObject({ kind: 'request', status: 422, message: 'Please enter callBackUrl. (code 422)' });
    expect(thrown({ code: 400 })).toMatchObject({ kind: 'request', message: 'error (code 400)' });
    expect(thrown({ code: 7, msg: 'odd' })).toMatchObject({ kind: 'request', status: 400 });
  });

  it("under another HTTP status: its refusals in its words, busy and failures left to the status", () => {
    expect(sunoapiRefusal(429, { code: 429, msg: 'The current credits are insufficient.' })).toEqual(new UpstreamRefused('The current credits are insufficient. (code 429)', 429, 'account'));
    expect(sunoapiRefusal(401, { code: 401, msg: 'bad key' })).toMatchObject({ kind: 'auth', status: 401 });
    expect(sunoapiRefusal(429, { code: 430, msg: 'slow down' })).toBeUndefined();
    expect(sunoapiRefusal(503, { code: 455, msg: 'maintenance' })).toBeUndefined();
    expect(sunoapiRefusal(502, {})).toBeUndefined();
  });
});

describe('sunoapi: the bodies it is sent', () => {
  it('a custom song: customMode, instrumental, model, the lyrics as prompt, style, title, negativeTags, callBackUrl', () => {
    expect(sunoapiMusicCall(song({ lyrics: '[Verse]\nLight on the sea', style: 'folk', avoidStyle: 'metal', title: 'Dusk' }), 'https://gw.example/cb')).toEqual({
      path: '/api/v1/generate',
      body: { customMode: true, instrumental: false, model: 'V4_5', prompt: '[Verse]\nLight on the sea', style: 'folk', title: 'Dusk', negativeTags: 'metal', callBackUrl: 'https://gw.example/cb' },
    });
  });

  it('an instrumental of a style: custom mode without a prompt; without a callback of our own, the placeholder they accept', () => {
    expect(sunoapiMusicCall(song({ style: 'ambient', title: 'Drift', instrumental: true }), undefined)).toEqual({
      path: '/api/v1/generate',
      body: { customMode: true, instrumental: true, model: 'V4_5', style: 'ambient', title: 'Drift', callBackUrl: SUNOAPI_NO_CALLBACK },
    });
    expect(SUNOAPI_NO_CALLBACK).toBe('https://example.com/callback');
  });

  it('a description: non-custom mode, the description alone as prompt', () => {
    expect(sunoapiMusicCall(song({ description: 'a calm song about the sea', model: 'V5' }), 'https://gw.example/cb').body).toEqual({
      customMode: false,
      instrumental: false,
      model: 'V5',
      prompt: 'a calm song about the sea',
      callBackUrl: 'https://gw.example/cb',
    });
  });

  it('a continuation of its own clip at a second: extend, defaultParamFlag, audioId, continueAt and the words asked', () => {
    const request = song({ lyrics: 'More', style: 'folk', title: 'Dusk II', continues: { upstreamClipId: 'e231-8cad', atS: 30.5, upload: false } });
    expect(sunoapiMusicCall(request, 'https://gw.example/cb', 'e231-8cad')).toEqual({
      path: '/api/v1/generate/extend',
      body: { defaultParamFlag: true, audioId: 'e231-8cad', model: 'V4_5', continueAt: 30.5, prompt: 'More', style: 'folk', title: 'Dusk II', callBackUrl: 'https://gw.example/cb' },
    });
  });

  it("a continuation asking nothing of its own: defaultParamFlag false (the clip's own parameters)", () => {
    const request = song({ continues: { upstreamClipId: 'e231-8cad', atS: null, upload: false } });
    expect(sunoapiMusicCall(request, undefined, 'e231-8cad').body).toEqual({ defaultParamFlag: false, audioId: 'e231-8cad', model: 'V4_5', callBackUrl: SUNOAPI_NO_CALLBACK });
  });

  it('a continuation of an upload: upload-extend with the link to it, instrumental, continueAt and the words asked', () => {
    const request = song({ style: 'piano', title: 'Upload II', instrumental: true, avoidStyle: 'drums', continues: { upstreamClipId: null, atS: 12, upload: true } });
    expect(sunoapiMusicCall(request, 'https://gw.example/cb', undefined, 'https://store.example/clip.mp3?sig=1')).toEqual({
      path: '/api/v1/generate/upload-extend',
      body: { uploadUrl: 'https://store.example/clip.mp3?sig=1', defaultParamFlag: true, instrumental: true, model: 'V4_5', continueAt: 12, style: 'piano', title: 'Upload II', negativeTags: 'drums', callBackUrl: 'https://gw.example/cb' },
    });
    const described = song({ description: 'keep going', continues: { upstreamClipId: null, atS: null, upload: true } });
    expect(sunoapiMusicCall(described, undefined, undefined, 'https://store.example/c.mp3').body).toEqual({
      uploadUrl: 'https://store.example/c.mp3',
      defaultParamFlag: false,
      instrumental: false,
      model: 'V4_5',
      prompt: 'keep going',
      callBackUrl: SUNOAPI_NO_CALLBACK,
    });
  });
});

describe('sunoapi: the style and title custom mode requires', () => {
  const ask = (over: Partial<MusicAsk>): MusicAsk => ({ lyrics: null, description: null, style: null, avoidStyle: null, instrumental: false, durationS: null, continues: null, ...over });
  const spec = SUNOAPI_MODELS.find((m) => m.id === 'V4_5')!;

  it('a song with lyrics, an instrumental without a description, or a continuation, without a style: not for its models; with one, or a description alone: theirs', () => {
    expect(unmetMusicFields(spec, ask({ lyrics: '[Verse]\nLa' }))).toEqual(['style']);
    expect(unmetMusicFields(spec, ask({ instrumental: true }))).toEqual(['style']);
    expect(unmetMusicFields(spec, ask({ description: 'keep going', continues: 'own' }))).toEqual(['style']);
    expect(unmetMusicFields(spec, ask({ lyrics: '[Verse]\nLa', style: 'folk' }))).toEqual([]);
    expect(unmetMusicFields(spec, ask({ description: 'a calm song' }))).toEqual([]);
    expect(unmetMusicFields(spec, ask({ description: 'more', style: 'folk', continues: 'stored' }))).toEqual([]);
    // a model that needs none takes a song without one
    expect(unmetMusicFields({ ...spec, needsStyle: false }, ask({ lyrics: '[Verse]\nLa' }))).toEqual([]);
  });

  it('a style to avoid: taken by its models (negativeTags); not by a model that says it takes none', () => {
    expect(unmetMusicFields(spec, ask({ description: 'a calm song', avoidStyle: 'metal' }))).toEqual([]);
    expect(unmetMusicFields({ ...spec, avoidStyle: false }, ask({ description: 'a calm song', avoidStyle: 'metal' }))).toEqual(['avoidStyle']);
    expect(unmetMusicFields({ ...spec, avoidStyle: false }, ask({ description: 'a calm song' }))).toEqual([]);
  });

  it('a title asked is sent as asked; else made up from the first line of lyrics past its tags, the description, the style, or Untitled, at most 80 characters', () => {
    expect(sunoapiTitle(song({ title: 'x'.repeat(100) }))).toBe('x'.repeat(100));
    expect(sunoapiTitle(song({ lyrics: '[Verse 1]\n\n  Lanterns on the water  \nsecond line', style: 'folk' }))).toBe('Lanterns on the water');
    expect(sunoapiTitle(song({ lyrics: '[Intro]', description: 'a calm song', style: 'folk' }))).toBe('a calm song');
    expect(sunoapiTitle(song({ style: 'ambient' }))).toBe('ambient');
    expect(sunoapiTitle(song({}))).toBe('Untitled');
    expect([...sunoapiTitle(song({ lyrics: 'é'.repeat(81) }))].length).toBe(80);
    expect(sunoapiMusicCall(song({ lyrics: '[Verse]\nLight', style: 'folk' }), undefined).body).toEqual(expect.objectContaining({ customMode: true, title: 'Light', style: 'folk' }));
  });

  it('a continuation with a description and no lyrics: the description is the prompt of defaultParamFlag (how it is to be extended)', () => {
    const request = song({ description: 'carry on', style: 'ambient', instrumental: true, continues: { upstreamClipId: null, atS: 12, upload: true } });
    expect(sunoapiMusicCall(request, undefined, undefined, 'https://store.example/u.mp3').body).toEqual(expect.objectContaining({ defaultParamFlag: true, continueAt: 12, prompt: 'carry on', style: 'ambient', title: 'carry on' }));
  });
});

describe('sunoapi: the answers it reads', () => {
  it("a create: its taskId; a refusal as the client would throw it; no taskId or another code names the field", () => {
    expect(sunoapiSubmitted(sunoapiCreated('5c79be8e'))).toBe('5c79be8e');
    expect(() => sunoapiSubmitted({ code: 430, msg: 'too frequent' })).toThrow(UpstreamBusy);
    expect(() => sunoapiSubmitted({ code: 413, msg: 'Theme or prompt too long' })).toThrow(new UpstreamRefused('Theme or prompt too long (code 413)', 413));
    expect(() => sunoapiSubmitted({ code: 200, msg: 'success', data: {} })).toThrow(new UnusableAnswer('the upstream answered the music task without a usable data.taskId (expected string, received undefined)'));
    expect(() => sunoapiSubmitted({ code: 200, msg: 'success', data: { taskId: '' } })).toThrow(/without a usable data\.taskId/);
    expect(() => sunoapiSubmitted({ msg: 'success', data: { taskId: 'x' } })).toThrow(/without a usable code/);
  });

  it('SUCCESS: both takes with their ids, audio, covers, lyrics and titles', () => {
    expect(sunoapiRecordStatus(recordOf('SUCCESS', [track(0), track(1, { imageUrl: '', prompt: '' })]))).toEqual({
      state: 'succeeded',
      clips: [
        { upstreamId: '8551-0', audioUrl: 'https://cdn.example/0.mp3', coverUrl: 'https://cdn.example/0.jpeg', lyrics: '[Verse] Night city lights shining bright', title: 'Iron Man' },
        { upstreamId: '8551-1', audioUrl: 'https://cdn.example/1.mp3', title: 'Iron Man' },
      ],
    });
  });

  it("an upload-extend's takes hold the upload up to the cut (fromStart), by the task's type or operationType; an extend's do not", () => {
    const typed = (type: Record<string, string>) => ({ code: 200, data: { status: 'SUCCESS', ...type, response: { sunoData: [{ id: 'a', audioUrl: 'https://a/1.mp3' }] } } });
    expect(sunoapiRecordStatus(typed({ type: 'UPLOAD_EXTEND' }))).toEqual({ state: 'succeeded', clips: [{ upstreamId: 'a', audioUrl: 'https://a/1.mp3', fromStart: true }] });
    expect(sunoapiRecordStatus(typed({ operationType: 'upload_extend' }))).toMatchObject({ clips: [{ fromStart: true }] });
    expect(sunoapiRecordStatus(typed({ type: 'EXTEND' }))).toEqual({ state: 'succeeded', clips: [{ upstreamId: 'a', audioUrl: 'https://a/1.mp3' }] });
  });

  it('PENDING, TEXT_SUCCESS, FIRST_SUCCESS and states it does not know: working', () => {
    expect(sunoapiRecordStatus(recordOf('PENDING', []))).toEqual({ state: 'working' });
    expect(sunoapiRecordStatus(recordOf('TEXT_SUCCESS', [track(0, { audioUrl: '' }), track(1, { audioUrl: '' })]))).toEqual({ state: 'working' });
    expect(sunoapiRecordStatus(recordOf('FIRST_SUCCESS', [track(0), track(1, { audioUrl: '' })]))).toEqual({ state: 'working' });
    expect(sunoapiRecordStatus({ code: 200, data: { status: 'QUEUED_SOMEWHERE' } })).toEqual({ state: 'working' });
  });

  it('a failed state: its words, state and code, its ids kept as secrets; the documented words when it gives none', () => {
    expect(sunoapiRecordStatus(recordOf('GENERATE_AUDIO_FAILED', [], { errorCode: 501, errorMessage: 'Generation failed, please retry' }))).toEqual({
      state: 'failed',
      reason: 'Generation failed, please retry (GENERATE_AUDIO_FAILED, code 501)',
      secrets: ['5c79be8e'],
    });
    expect(sunoapiRecordStatus(recordOf('SENSITIVE_WORD_ERROR', [], { errorCode: null, errorMessage: null }))).toMatchObject({ reason: 'content contains prohibited words (SENSITIVE_WORD_ERROR)' });
    expect(sunoapiRecordStatus(recordOf('CREATE_TASK_FAILED', [], { errorCode: 400, errorMessage: ' ' }))).toMatchObject({ reason: 'failed to create the generation task (CREATE_TASK_FAILED, code 400)' });
    const inResponse = { code: 200, data: { taskId: 't-1', status: 'GENERATE_AUDIO_FAILED', response: { sunoData: [], errorMessage: 'from the response' }, errorCode: '501' } };
    expect(sunoapiRecordStatus(inResponse)).toEqual({ state: 'failed', reason: 'from the response (GENERATE_AUDIO_FAILED, code 501)', secrets: ['t-1'] });
  });

  it('CALLBACK_EXCEPTION: the song when every take has its audio, else failed', () => {
    expect(sunoapiRecordStatus(recordOf('CALLBACK_EXCEPTION', [track(0), track(1)]))).toMatchObject({ state: 'succeeded', clips: [{ upstreamId: '8551-0' }, { upstreamId: '8551-1' }] });
    expect(sunoapiRecordStatus(recordOf('CALLBACK_EXCEPTION', [track(0), track(1, { audioUrl: '' })]))).toEqual({
      state: 'failed',
      reason: 'an error occurred during the callback (CALLBACK_EXCEPTION)',
      secrets: ['5c79be8e', '8551-0', '8551-1'],
    });
  });

  it('an answer it cannot use names the field; a take of another shape is left out; a refusal under 200 is thrown', () => {
    expect(() => sunoapiRecordStatus({ code: 200, msg: 'success' })).toThrow(new UnusableAnswer('the upstream answered the record-info query without a usable data (expected object, received undefined)'));
    expect(() => sunoapiRecordStatus({ code: 200, data: { taskId: 'x', response: null } })).toThrow(/without a usable data\.status \(expected string, received undefined\)/);
    expect(sunoapiRecordStatus({ code: 200, data: { status: 'SUCCESS', response: { sunoData: ['x', null, { id: 7, audioUrl: 'https://a/1.mp3' }] } } })).toEqual({ state: 'succeeded', clips: [{ audioUrl: 'https://a/1.mp3' }] });
    expect(sunoapiRecordStatus({ code: 200, data: { status: 'SUCCESS', response: 'odd' } })).toEqual({ state: 'succeeded', clips: [] });
    expect(() => sunoapiRecordStatus({ code: 401, msg: 'no access' })).toThrow(expect.objectContaining({ kind: 'auth' }));
  });

  it("the callbacks' bodies, as documented: a stage's code 200 with its takes in snake_case, a failure's code and no takes", () => {
    expect(sunoapiStageCallback('text', 't-1', [track(0)])).toEqual({ code: 200, msg: 'Text generation completed successfully.', data: { callbackType: 'text', task_id: 't-1', data: [] } });
    expect(sunoapiStageCallback('complete', 't-1', [track(0)]).data).toEqual({
      callbackType: 'complete',
      task_id: 't-1',
      data: [
        {
          id: '8551-0',
          audio_url: 'https://cdn.example/0.mp3',
          stream_audio_url: 'https://cdn.example/stream/0',
          image_url: 'https://cdn.example/0.jpeg',
          prompt: '[Verse] Night city lights shining bright',
          model_name: 'chirp-auk',
          title: 'Iron Man',
          tags: 'electrifying, rock',
          createTime: '2025-01-01 00:00:00',
          duration: 198.44,
        },
      ],
    });
    expect(sunoapiErrorCallback('t-1', 501, 'Audio generation failed.')).toEqual({ code: 501, msg: 'Audio generation failed.', data: { callbackType: 'error', task_id: 't-1', data: [] } });
  });
});
