/**
 * The bodies of the sunoapi.org family's music API (sunoapi.org, api.box, kie.ai), exactly as their docs show
 * them (docs.sunoapi.org: Generate Music, Extend Music, Upload And Extend Audio, Get Music Generation Details,
 * Get Remaining Credits, Music Generation Callbacks, Convert to WAV Format, Get WAV Conversion Details, WAV Format
 * Conversion Callbacks; docs.kie.ai for the callbacks' failure body), for the fake
 * and for anything that speaks this shape (a door in it, and its tests). Every answer is `{code, msg, data}`
 * under HTTP 200, its `code` the outcome.
 */

/** A take as the family describes it; its answers spell it camelCase (record-info) or snake_case (callbacks). */
export interface SunoapiTrack {
  id: string;
  audioUrl: string;
  sourceAudioUrl?: string;
  streamAudioUrl: string;
  sourceStreamAudioUrl?: string;
  imageUrl: string;
  sourceImageUrl?: string;
  /** The lyrics sung (or written, in non-custom mode); empty for an instrumental. */
  prompt: string;
  /** Suno's own name of the model ("chirp-v3-5", "chirp-v4", …). */
  modelName: string;
  title: string;
  tags: string;
  /** "2025-01-01 00:00:00" */
  createTime: string;
  /** Seconds; null until the take is made. */
  duration: number | null;
}

/** The task states `record-info` reports. */
export const SUNOAPI_STATES = ['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS', 'SUCCESS', 'CREATE_TASK_FAILED', 'GENERATE_AUDIO_FAILED', 'CALLBACK_EXCEPTION', 'SENSITIVE_WORD_ERROR'] as const;
export type SunoapiState = (typeof SUNOAPI_STATES)[number];

/** The response codes their docs list: 200 success, 400 parameters, 401 unauthorized, 404 method or path, 405 over the limit, 413 prompt too long, 429 insufficient credits, 430 call frequency too high, 455 maintenance, 500 server error. */
export const SUNOAPI_CODES = { ok: 200, badRequest: 400, unauthorized: 401, notFound: 404, overLimit: 405, tooLong: 413, noCredits: 429, tooFrequent: 430, maintenance: 455, serverError: 500 } as const;

/** Any answer: `{code, msg, data}`. */
export function sunoapiAnswer(code: number, msg: string, data: unknown = null): { code: number; msg: string; data: unknown } {
  return { code, msg, data };
}

/** A create's answer (generate, extend, upload-extend): `{code: 200, msg: "success", data: {taskId}}`. */
export function sunoapiCreated(taskId: string) {
  return sunoapiAnswer(200, 'success', { taskId });
}

/** The balance (`GET /api/v1/generate/credit`): `{code: 200, msg: "success", data: <credits>}`. */
export function sunoapiCredits(credits: number) {
  return sunoapiAnswer(200, 'success', credits);
}

/** A task as record-info knows it. */
export interface SunoapiRecordTask {
  taskId: string;
  /** The create's body (record-info answers it as a JSON string in `param`). */
  param: Record<string, unknown>;
  status: SunoapiState;
  /** GENERATE, EXTEND, UPLOAD_EXTEND. */
  type: string;
  /** The take continued (an extend's audioId), else "". */
  parentMusicId: string;
  /** Its takes so far (none while PENDING). */
  tracks: SunoapiTrack[];
  errorCode: number | null;
  errorMessage: string | null;
}

/** A take as record-info lists it (`response.sunoData[]`, camelCase). */
export function sunoapiRecordTrack(t: SunoapiTrack): Record<string, unknown> {
  return {
    id: t.id,
    audioUrl: t.audioUrl,
    ...(t.sourceAudioUrl !== undefined ? { sourceAudioUrl: t.sourceAudioUrl } : {}),
    streamAudioUrl: t.streamAudioUrl,
    ...(t.sourceStreamAudioUrl !== undefined ? { sourceStreamAudioUrl: t.sourceStreamAudioUrl } : {}),
    imageUrl: t.imageUrl,
    ...(t.sourceImageUrl !== undefined ? { sourceImageUrl: t.sourceImageUrl } : {}),
    prompt: t.prompt,
    modelName: t.modelName,
    title: t.title,
    tags: t.tags,
    createTime: t.createTime,
    duration: t.duration,
  };
}

/**
 * `GET /api/v1/generate/record-info?taskId=`: `{code: 200, msg: "success", data: {taskId, parentMusicId, param,
 * response: {taskId, sunoData: [...]}, status, type, errorCode, errorMessage}}`; a failed task's response
 * carries its errorMessage and no takes; a pending one has no response yet.
 */
export function sunoapiRecordInfo(task: SunoapiRecordTask) {
  const failed = task.errorCode !== null || task.errorMessage !== null;
  const response =
    task.status === 'PENDING' && task.tracks.length === 0
      ? null
      : { taskId: task.taskId, sunoData: task.tracks.map(sunoapiRecordTrack), ...(failed ? { errorMessage: task.errorMessage } : {}) };
  return sunoapiAnswer(200, 'success', {
    taskId: task.taskId,
    parentMusicId: task.parentMusicId,
    param: JSON.stringify(task.param),
    response,
    status: task.status,
    type: task.type,
    errorCode: task.errorCode,
    errorMessage: task.errorMessage,
  });
}

/** A take as a callback lists it (`data.data[]`, snake_case). */
export function sunoapiCallbackTrack(t: SunoapiTrack): Record<string, unknown> {
  return {
    id: t.id,
    audio_url: t.audioUrl,
    ...(t.sourceAudioUrl !== undefined ? { source_audio_url: t.sourceAudioUrl } : {}),
    stream_audio_url: t.streamAudioUrl,
    ...(t.sourceStreamAudioUrl !== undefined ? { source_stream_audio_url: t.sourceStreamAudioUrl } : {}),
    image_url: t.imageUrl,
    ...(t.sourceImageUrl !== undefined ? { source_image_url: t.sourceImageUrl } : {}),
    prompt: t.prompt,
    model_name: t.modelName,
    title: t.title,
    tags: t.tags,
    createTime: t.createTime,
    duration: t.duration,
  };
}

/** The callback stages: text (lyrics written), first (one take made), complete (both made). */
export type SunoapiStage = 'text' | 'first' | 'complete';

/** The words each stage's callback says. */
export const SUNOAPI_STAGE_WORDS: Readonly<Record<SunoapiStage, string>> = {
  text: 'Text generation completed successfully.',
  first: 'First track generation completed.',
  complete: 'All generated successfully.',
};

/**
 * A stage's callback, POSTed to callBackUrl: `{code: 200, msg, data: {callbackType, task_id, data: [...]}}`;
 * the text stage lists no takes ("empty for the text callback"), first the take made, complete both.
 */
export function sunoapiStageCallback(stage: SunoapiStage, taskId: string, tracks: SunoapiTrack[]) {
  return sunoapiAnswer(200, SUNOAPI_STAGE_WORDS[stage], { callbackType: stage, task_id: taskId, data: stage === 'text' ? [] : tracks.map(sunoapiCallbackTrack) });
}

/**
 * A failed task's callback: its code (400 copyrighted lyrics, 408 timeout, 413 an upload matching an existing
 * work, 500, 501 audio generation failed, 531 failed with the credits refunded) and words, `callbackType`
 * "error", no takes.
 */
export function sunoapiErrorCallback(taskId: string, code: number, msg: string) {
  return sunoapiAnswer(code, msg, { callbackType: 'error', task_id: taskId, data: [] });
}

/** One word of `get-timestamped-lyrics`' alignedWords: its text (a section's first word carries its tag, `[Verse]\nMorning`), whether it was aligned, its start and end (s), the alignment's confidence. */
export interface SunoapiAlignedWord {
  word: string;
  success: boolean;
  startS: number;
  endS: number;
  palign: number;
}

/**
 * `POST /api/v1/generate/get-timestamped-lyrics` {taskId, audioId}: `{code: 200, msg: "success", data:
 * {alignedWords: [{word, success, startS, endS, palign}], waveformData: [numbers], hootCer, isStreamed}}`; an
 * instrumental's alignedWords are empty ("no lyrics data will be available").
 */
export function sunoapiTimestampedLyrics(alignedWords: SunoapiAlignedWord[], waveformData: number[] = [], hootCer = 0.05, isStreamed = false) {
  return sunoapiAnswer(200, 'success', { alignedWords, waveformData, hootCer, isStreamed });
}

/**
 * Lyrics aligned as Suno aligns them: the sung words spread over `durationS` from `fromS` (an upload-extend's whole
 * track: from its cut), a section's tag and a new line kept before its first word, each word held 80 % of its share.
 */
export function sunoapiAligned(lyrics: string, fromS: number, durationS: number): SunoapiAlignedWord[] {
  const words: string[] = [];
  let prefix = '';
  for (const raw of lyrics.split('\n')) {
    const line = raw.trim();
    if (/^\[[^\]]*\]$/.test(line)) {
      prefix += `${line}\n`;
      continue;
    }
    line
      .split(/\s+/)
      .filter(Boolean)
      .forEach((w, i) => {
        words.push(i === 0 ? `${prefix}${w}` : ` ${w}`);
        prefix = '';
      });
  }
  if (words.length === 0) return [];
  const share = durationS / words.length;
  const round = (s: number) => Math.round(s * 100_000) / 100_000;
  return words.map((word, i) => ({ word, success: true, startS: round(fromS + i * share), endS: round(fromS + i * share + share * 0.8), palign: 1 }));
}

/** The lyrics task states `GET /api/v1/lyrics/record-info` reports (Get Lyrics Generation Details). */
export const SUNOAPI_LYRICS_STATES = ['PENDING', 'SUCCESS', 'CREATE_TASK_FAILED', 'GENERATE_LYRICS_FAILED', 'CALLBACK_EXCEPTION', 'SENSITIVE_WORD_ERROR'] as const;
export type SunoapiLyricsState = (typeof SUNOAPI_LYRICS_STATES)[number];

/** One version of lyrics a task wrote: its words with section tags, its title, `complete` or `failed` with its words. */
export interface SunoapiLyricsVersion {
  text: string;
  title: string;
  status: 'complete' | 'failed';
  errorMessage: string;
}

/** A lyrics task as record-info knows it. */
export interface SunoapiLyricsTask {
  taskId: string;
  /** The create's body (answered as a JSON string in `param`). */
  param: Record<string, unknown>;
  status: SunoapiLyricsState;
  /** Its versions (none while PENDING or failed). */
  versions: SunoapiLyricsVersion[];
  errorCode: number | null;
  errorMessage: string | null;
}

/**
 * `GET /api/v1/lyrics/record-info?taskId=`: `{code: 200, msg: "success", data: {taskId, param, response: {taskId,
 * data: [{text, title, status, errorMessage}]}, status, type: "LYRICS", errorCode, errorMessage}}`; a pending
 * task has no response yet.
 */
export function sunoapiLyricsRecordInfo(task: SunoapiLyricsTask) {
  const response = task.status === 'PENDING' ? null : { taskId: task.taskId, data: task.versions.map((v) => ({ ...v })) };
  return sunoapiAnswer(200, 'success', {
    taskId: task.taskId,
    param: JSON.stringify(task.param),
    response,
    status: task.status,
    type: 'LYRICS',
    errorCode: task.errorCode,
    errorMessage: task.errorMessage,
  });
}

/**
 * The lyrics callback (one stage, complete), POSTed to callBackUrl: `{code: 200, msg: "All generated
 * successfully.", data: {callbackType: "complete", taskId, data: [{text, title, status, errorMessage}]}}`.
 */
export function sunoapiLyricsCallback(taskId: string, versions: SunoapiLyricsVersion[]) {
  return sunoapiAnswer(200, 'All generated successfully.', { callbackType: 'complete', taskId, data: versions.map((v) => ({ ...v })) });
}

/** A failed lyrics task's callback: its code (400 parameters or content, 451 download, 500) and words, `callbackType` "error", `data` null. */
export function sunoapiLyricsErrorCallback(taskId: string, code: number, msg: string) {
  return sunoapiAnswer(code, msg, { callbackType: 'error', taskId, data: null });
}

/** The WAV conversion states `wav/record-info` reports (its `successFlag`). */
export const SUNOAPI_WAV_STATES = ['PENDING', 'SUCCESS', 'CREATE_TASK_FAILED', 'GENERATE_WAV_FAILED', 'CALLBACK_EXCEPTION'] as const;

/** A WAV conversion as `GET /api/v1/wav/record-info` answers it (docs.sunoapi.org: Get WAV Conversion Details). */
export function sunoapiWavRecordInfo(r: {
  taskId: string;
  musicId: string;
  callbackUrl: string | null;
  completeTime: string | null;
  audioWavUrl: string | null;
  successFlag: (typeof SUNOAPI_WAV_STATES)[number];
  createTime: string;
  errorCode: number | null;
  errorMessage: string | null;
}) {
  return sunoapiAnswer(200, 'success', {
    taskId: r.taskId,
    musicId: r.musicId,
    callbackUrl: r.callbackUrl,
    completeTime: r.completeTime,
    response: r.audioWavUrl === null ? null : { audioWavUrl: r.audioWavUrl },
    successFlag: r.successFlag,
    createTime: r.createTime,
    errorCode: r.errorCode,
    errorMessage: r.errorMessage,
  });
}

/** The one callback of a WAV conversion, when it is done (docs.sunoapi.org: WAV Format Conversion Callbacks): `{code: 200, msg: "success", data: {audioWavUrl, task_id}}`. */
export function sunoapiWavCallback(taskId: string, audioWavUrl: string) {
  return sunoapiAnswer(200, 'success', { audioWavUrl, task_id: taskId });
}
