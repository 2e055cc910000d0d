import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { MusicAnswer, MusicClipStatus, MusicCreate, MusicRequest, MusicStatus, MusicVendor } from '../contracts/music-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { SUNOAPI_MODELS } from './sunoapi-models.js';
import { checkSunoapiAnswer, SUNOAPI, sunoapiRefusal } from './sunoapi.vendor.js';

/**
 * The callBackUrl sent when the gateway has none of its own to give (UPSTREAM_CALLBACK_BASE_URL unset): the
 * family requires one (kie.ai refuses a create without it: "Please enter callBackUrl"), and its polls do
 * without. IANA's reserved documentation domain: it passes their URL checks and is no one's server.
 */
export const SUNOAPI_NO_CALLBACK = 'https://example.com/callback';

/** One take as `record-info` lists it in `response.sunoData` (camelCase); a field of another type is read as absent. */
const TRACK = z.object({
  id: z.string().optional().catch(undefined),
  audioUrl: z.string().nullish().catch(undefined),
  imageUrl: z.string().nullish().catch(undefined),
  // the lyrics it sang (description mode: those it wrote); none for an instrumental
  prompt: z.string().nullish().catch(undefined),
  title: z.string().nullish().catch(undefined),
});

/**
 * A task as `GET /api/v1/generate/record-info` answers it in `data`: its `status` (what the state is read
 * from: an answer without one is not usable), its takes in `response.sunoData` (anything but a take object left
 * out), and a failure's `errorCode` and `errorMessage`.
 */
const RECORD = z.object({
  taskId: z.string().optional().catch(undefined),
  status: z.string(),
  // GENERATE, EXTEND, UPLOAD_EXTEND (kie.ai: operationType generate, extend, upload_extend)
  type: z.string().nullish().catch(undefined),
  operationType: z.string().nullish().catch(undefined),
  response: z
    .object({
      sunoData: z
        .array(z.unknown())
        .nullish()
        .catch(undefined)
        .transform((items) => (items ?? []).flatMap((item) => (typeof item === 'object' && item !== null && !Array.isArray(item) ? [TRACK.parse(item)] : []))),
      errorMessage: z.string().nullish().catch(undefined),
    })
    .nullish()
    .catch(undefined),
  errorCode: z.union([z.number(), z.string()]).nullish().catch(undefined),
  errorMessage: z.string().nullish().catch(undefined),
});

type SunoapiRecord = z.infer<typeof RECORD>;

/** The words of each failed state, as docs.sunoapi.org describes it, for a task that gives none of its own. */
const FAILED: Readonly<Record<string, string>> = {
  CREATE_TASK_FAILED: 'failed to create the generation task',
  GENERATE_AUDIO_FAILED: 'failed to generate music tracks',
  SENSITIVE_WORD_ERROR: 'content contains prohibited words',
  CALLBACK_EXCEPTION: 'an error occurred during the callback',
};

/** A create's call: its path under the base, and its body. */
export interface SunoapiCall {
  path: '/api/v1/generate' | '/api/v1/generate/extend' | '/api/v1/generate/upload-extend';
  body: Record<string, unknown>;
}

/**
 * A Suno-style aggregator in sunoapi.org's shape (sunoapi.org, api.box, kie.ai): `POST {base}/api/v1/generate`
 * (a new song), `/generate/extend` (a continuation of a clip it made, by its audioId) and
 * `/generate/upload-extend` (a continuation of any other clip, by a link it fetches: `create.source`), each
 * answering `{code: 200, data: {taskId}}`; `GET {base}/api/v1/generate/record-info?taskId=` reports the task
 * (PENDING, TEXT_SUCCESS, FIRST_SUCCESS, SUCCESS, or a failed state) and its two takes. It calls back
 * callBackUrl at the text, first and complete stages (a hint: the task is then asked about).
 */
@Injectable()
export class SunoapiMusicVendor implements MusicVendor {
  static readonly protocol = SUNOAPI.protocol;
  readonly protocol = SunoapiMusicVendor.protocol;
  static readonly models = SUNOAPI_MODELS;
  readonly models = SUNOAPI_MODELS;
  readonly minPollS = SUNOAPI.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: MusicCreate): Promise<MusicAnswer> {
    const { request } = create;
    const own = request.continues && !request.continues.upload ? request.continues.upstreamClipId : null;
    let uploadUrl: string | undefined;
    if (request.continues && !own) {
      // a continuation of an upload (or of a clip it cannot name): it fetches the clip from our store
      if (!create.source) throw new UpstreamRefused('the continuation names no clip this vendor can take (neither its own clip id nor a link to the clip)', 0, 'request', true);
      uploadUrl = await create.source.url();
    }
    const call = sunoapiMusicCall(request, create.callbackUrl, own ?? undefined, uploadUrl);
    const answer = await this.client.call('POST', `${account.baseUrl}${call.path}`, { body: call.body, auth: account.auth, failFast: true, refusal: sunoapiRefusal });
    return { upstreamId: sunoapiSubmitted(answer.json) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<MusicStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/api/v1/generate/record-info?taskId=${encodeURIComponent(upstreamId)}`, {
      auth: account.auth,
      idempotent: true,
      once,
      refusal: sunoapiRefusal,
    });
    return sunoapiRecordStatus(answer.json);
  }
}

/**
 * A song as the family's API takes it: the model, `callBackUrl` (the gateway's, else SUNOAPI_NO_CALLBACK),
 * and
 * - a new song (`/generate`): `customMode` with the lyrics as `prompt`, `style`, `title` and `negativeTags`
 *   (each only when asked, the title made up when none is: custom mode requires one); or, with a description and no
 *   lyrics, non-custom mode: the description alone as `prompt` (their docs: the other fields are to be left
 *   empty); `instrumental` either way;
 * - a continuation of its own clip (`/generate/extend`, `audioId`) or of a clip it fetches (`/generate/upload-extend`,
 *   `uploadUrl`, `instrumental`): `defaultParamFlag` true with `continueAt`, `prompt` (the lyrics, else the
 *   description: "how the music should be extended"), `style`, `title` (made up when none is asked) and
 *   `negativeTags` when any of the lyrics, style, title or second is asked; else false (the clip's own parameters),
 *   an upload's description as `prompt`.
 * Their required style is the models' `needsStyle`: a request without one never reaches them.
 */
export function sunoapiMusicCall(request: MusicRequest, callbackUrl: string | undefined, audioId?: string, uploadUrl?: string): SunoapiCall {
  const callBackUrl = callbackUrl ?? SUNOAPI_NO_CALLBACK;
  const given = (fields: Record<string, string | number | null>) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
  const custom = (prompt: string | null) => ({ prompt, style: request.style, title: sunoapiTitle(request), negativeTags: request.avoidStyle });
  if (!request.continues) {
    const customMode = request.lyrics !== null || request.description === null;
    const words = customMode ? given(custom(request.lyrics)) : { prompt: request.description };
    return { path: '/api/v1/generate', body: { customMode, instrumental: request.instrumental, model: request.model, ...words, callBackUrl } };
  }
  const atS = request.continues.atS;
  const defaultParamFlag = request.lyrics !== null || request.style !== null || request.title !== null || atS !== null;
  const words = defaultParamFlag ? given({ continueAt: atS, ...custom(request.lyrics ?? request.description) }) : {};
  if (audioId !== undefined) return { path: '/api/v1/generate/extend', body: { defaultParamFlag, audioId, model: request.model, ...words, callBackUrl } };
  const description = !defaultParamFlag && request.description !== null ? { prompt: request.description } : {};
  return { path: '/api/v1/generate/upload-extend', body: { uploadUrl, defaultParamFlag, instrumental: request.instrumental, model: request.model, ...words, ...description, callBackUrl } };
}

/** The shortest title limit of the family's models (V3_5 and V4: 80 characters). */
const TITLE_MAX = 80;

/**
 * The title sent in custom mode, which requires one: the one asked, else made up from the song (its first line of
 * lyrics that is not a [Section] tag, else its description, else its style, else "Untitled"), at most 80 characters
 * (an asked title is sent as asked).
 */
export function sunoapiTitle(request: MusicRequest): string {
  if (request.title !== null) return request.title;
  const line = request.lyrics
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !/^\[[^\]]*\]$/.test(l));
  const title = [line, request.description, request.style].map((t) => t?.trim()).find((t) => t) ?? 'Untitled';
  return [...title].slice(0, TITLE_MAX).join('');
}

/** The task id a create answered (`{code: 200, msg, data: {taskId}}`); a refusal under HTTP 200 thrown as the client would; else unusable, naming the field. */
export function sunoapiSubmitted(json: Record<string, unknown>): string {
  checkSunoapiAnswer(json, true);
  return readAnswer(z.object({ code: z.literal(200), data: z.object({ taskId: z.string().min(1) }) }), json, 'the music task').data.taskId;
}

/** A `record-info` answer (`{code: 200, msg, data: <task>}`) as a music status; a refusal under HTTP 200 thrown as the client would. */
export function sunoapiRecordStatus(json: Record<string, unknown>): MusicStatus {
  checkSunoapiAnswer(json);
  return sunoapiStatus(readAnswer(z.object({ data: RECORD }), json, 'the record-info query').data);
}

/**
 * SUCCESS with its takes (an upload-extend's from the upload's start: `fromStart`); CREATE_TASK_FAILED, GENERATE_AUDIO_FAILED and SENSITIVE_WORD_ERROR failed with its
 * words and state (SENSITIVE_WORD_ERROR reads as a content refusal); CALLBACK_EXCEPTION (its call to our
 * callBackUrl failed) with every take's audio is the song made, else failed; anything else (PENDING,
 * TEXT_SUCCESS, FIRST_SUCCESS: one take is not the task's two) still working.
 */
export function sunoapiStatus(record: SunoapiRecord): MusicStatus {
  const tracks = record.response?.sunoData ?? [];
  const made = tracks.length > 0 && tracks.every((t) => nonEmpty(t.audioUrl));
  // an upload-extend's take is "a longer track that continues the input": the upload up to the cut, then the new part
  const fromStart = /^upload[_-]?extend$/i.test(record.type ?? record.operationType ?? '');
  if (record.status === 'SUCCESS' || (record.status === 'CALLBACK_EXCEPTION' && made)) return { state: 'succeeded', clips: tracks.map((t) => ({ ...clipOf(t), ...(fromStart ? { fromStart } : {}) })) };
  const fallback = FAILED[record.status];
  if (fallback === undefined) return { state: 'working' };
  const words = nonEmpty(record.errorMessage) ?? nonEmpty(record.response?.errorMessage) ?? fallback;
  const code = record.errorCode !== null && record.errorCode !== undefined && record.errorCode !== '' ? `, code ${record.errorCode}` : '';
  const secrets = [record.taskId, ...tracks.map((t) => t.id)].filter((id): id is string => typeof id === 'string' && id !== '');
  return { state: 'failed', reason: `${words} (${record.status}${code})`, secrets };
}

function clipOf(track: z.infer<typeof TRACK>): MusicClipStatus {
  return {
    ...(track.id ? { upstreamId: track.id } : {}),
    ...(nonEmpty(track.audioUrl) ? { audioUrl: track.audioUrl! } : {}),
    ...(nonEmpty(track.imageUrl) ? { coverUrl: track.imageUrl! } : {}),
    ...(nonEmpty(track.prompt) ? { lyrics: track.prompt! } : {}),
    ...(nonEmpty(track.title) ? { title: track.title! } : {}),
  };
}

function nonEmpty(value: string | null | undefined): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}
