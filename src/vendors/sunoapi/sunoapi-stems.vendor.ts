import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { StemAudio, StemsAnswer, StemsCreate, StemsModelSpec, StemSplit, StemsStatus, StemsVendor } from '../contracts/stems-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { SUNOAPI_NO_CALLBACK, sunoapiSubmitted } from './sunoapi-music.vendor.js';
import { checkSunoapiAnswer, SUNOAPI, sunoapiRefusal } from './sunoapi.vendor.js';

/** The stems of `split_stem`, in the order kept, each with the `record-info` field that links it. */
const SPLIT_STEM_FIELDS = [
  ['vocals', 'vocalUrl'],
  ['backing_vocals', 'backingVocalsUrl'],
  ['drums', 'drumsUrl'],
  ['bass', 'bassUrl'],
  ['guitar', 'guitarUrl'],
  ['keyboard', 'keyboardUrl'],
  ['piano', 'pianoUrl'],
  ['percussion', 'percussionUrl'],
  ['strings', 'stringsUrl'],
  ['synth', 'synthUrl'],
  ['fx', 'fxUrl'],
  ['brass', 'brassUrl'],
  ['woodwinds', 'woodwindsUrl'],
] as const;
/** The stems of `separate_vocal`. */
const SEPARATE_VOCAL_FIELDS = [
  ['vocals', 'vocalUrl'],
  ['instrumental', 'instrumentalUrl'],
] as const;

/**
 * The family's vocal removal (its docs, "Separate vocals from music"): only its own takes, named by the task
 * that made them and the take's id; `separate_vocal` (vocals and instrumental) or `split_stem` (up to twelve
 * stems, those the song has); MP3 links.
 */
export const SUNOAPI_STEMS_MODELS: readonly StemsModelSpec[] = [
  {
    id: 'vocal-removal',
    splits: { two: SEPARATE_VOCAL_FIELDS.map(([name]) => name), all: SPLIT_STEM_FIELDS.map(([name]) => name) },
    source: 'own',
    format: 'mp3',
  },
];

/** Its `type` for each split. */
export const SUNOAPI_STEM_TYPES: Readonly<Record<StemSplit, string>> = { two: 'separate_vocal', all: 'split_stem' };

/** The body of `POST /api/v1/vocal-removal/generate`: the take (`taskId` of the task that made it, `audioId`), the type, `callBackUrl` (required). */
export function sunoapiStemsBody(create: Pick<StemsCreate, 'request' | 'own' | 'callbackUrl'>): { taskId: string; audioId: string; type: string; callBackUrl: string } {
  const own = create.own;
  if (!own || !own.upstreamTaskId) throw new UpstreamRefused("the vocal removal names a take by the vendor's task and clip ids, and this clip has not both", 0, 'request', true);
  return { taskId: own.upstreamTaskId, audioId: own.upstreamClipId, type: SUNOAPI_STEM_TYPES[create.request.split], callBackUrl: create.callbackUrl ?? SUNOAPI_NO_CALLBACK };
}

const URL_FIELD = z.string().nullish().catch(null);
const RECORD = z.object({
  successFlag: z.string().nullish().catch(null),
  errorCode: z.union([z.string(), z.number()]).nullish().catch(null),
  errorMessage: z.string().nullish().catch(null),
  response: z.record(z.string(), URL_FIELD).nullish().catch(null),
});

/**
 * A `GET /api/v1/vocal-removal/record-info` answer (`{code: 200, msg, data}`) as a stems status: `successFlag`
 * SUCCESS with the links it set (`separate_vocal`: `vocalUrl`, `instrumentalUrl`; `split_stem`: each stem's
 * `…Url` the song has; `originUrl`, the song itself, left out), CREATE_TASK_FAILED, GENERATE_AUDIO_FAILED failed with its words, the rest
 * (PENDING) working; CALLBACK_EXCEPTION (its call to our callBackUrl failed) with links is the split made.
 */
export function sunoapiStemsStatus(json: Record<string, unknown>): StemsStatus {
  checkSunoapiAnswer(json);
  const record = readAnswer(z.object({ data: RECORD }), json, 'the vocal removal record-info query').data;
  const response = record.response ?? {};
  // the links its answer sets: separate_vocal's two, or split_stem's (the record does not say which was asked)
  const fields = [...SEPARATE_VOCAL_FIELDS, ...SPLIT_STEM_FIELDS.slice(1)];
  const stems: StemAudio[] = fields.flatMap(([name, field]) => (typeof response[field] === 'string' && response[field]!.trim() ? [{ name, audioUrl: response[field]! }] : []));
  const flag = record.successFlag ?? '';
  if (flag === 'SUCCESS' || (flag === 'CALLBACK_EXCEPTION' && stems.length > 0)) {
    return stems.length > 0 ? { state: 'succeeded', stems } : { state: 'failed', reason: 'the vocal removal succeeded without a link to any stem', secrets: [] };
  }
  if (/FAILED$|EXCEPTION$/.test(flag)) return { state: 'failed', reason: `${record.errorMessage ?? flag}${record.errorCode != null ? ` (${record.errorCode})` : ''} (${flag})`, secrets: [] };
  return { state: 'working' };
}

/**
 * The sunoapi.org family's vocal removal, asynchronous: `POST {base}/api/v1/vocal-removal/generate` answers
 * `{code: 200, data: {taskId}}`; `GET {base}/api/v1/vocal-removal/record-info?taskId=` reports it. Its own
 * takes only (the relay pins the task to the channel that made the clip).
 */
@Injectable()
export class SunoapiStemsVendor implements StemsVendor {
  static readonly protocol = SUNOAPI.protocol;
  static readonly models = SUNOAPI_STEMS_MODELS;
  readonly protocol = SunoapiStemsVendor.protocol;
  readonly models = SUNOAPI_STEMS_MODELS;
  readonly minPollS = SUNOAPI.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: StemsCreate): Promise<StemsAnswer> {
    const body = sunoapiStemsBody(create);
    const answer = await this.client.call('POST', `${account.baseUrl}/api/v1/vocal-removal/generate`, { body, auth: account.auth, failFast: true, refusal: sunoapiRefusal });
    return { upstreamId: sunoapiSubmitted(answer.json) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<StemsStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/api/v1/vocal-removal/record-info?taskId=${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once, refusal: sunoapiRefusal });
    return sunoapiStemsStatus(answer.json);
  }
}
