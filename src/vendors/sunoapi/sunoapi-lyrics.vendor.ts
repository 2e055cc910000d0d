import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { LyricsAnswer, LyricsCreate, LyricsModelSpec, LyricsStatus, LyricsText, LyricsVendor } from '../contracts/lyrics-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { SUNOAPI_NO_CALLBACK } from './sunoapi-music.vendor.js';
import { checkSunoapiAnswer, SUNOAPI, sunoapiRefusal } from './sunoapi.vendor.js';

/**
 * Its lyrics prompt's limit: docs.sunoapi.org's Generate Lyrics gives "最大字数限制为200字" (200 characters; its
 * English pages, and kie.ai's, translate it as "200 words"): the stricter reading, so that no prompt the door
 * takes is refused there (413, "the theme or prompt is too long").
 */
export const SUNOAPI_LYRICS_PROMPT_MAX = 200;

/**
 * Suno's lyrics writer through the family: one model (the route takes none), named as the new-api-shaped
 * aggregators' (`suno_lyrics`: the same Suno lyrics, so a request naming it may go to either shape), two
 * versions a task (its callback's and record-info's examples list two; "multiple lyrics variations").
 */
export const SUNOAPI_LYRICS_MODELS: readonly LyricsModelSpec[] = [{ id: 'suno_lyrics', promptMax: SUNOAPI_LYRICS_PROMPT_MAX, takes: 2 }];

/** One version as record-info lists it (`response.data[]`; older pages: `lyricsData`); a field of another type is read as absent. */
const VERSION = z.object({
  text: z.string().nullish().catch(undefined),
  title: z.string().nullish().catch(undefined),
  // complete, failed
  status: z.string().nullish().catch(undefined),
  errorMessage: z.string().nullish().catch(undefined),
  // kie.ai's spelling in its callbacks
  error_message: z.string().nullish().catch(undefined),
});

/** A list of versions: anything but a version object left out. */
const VERSIONS = z
  .array(z.unknown())
  .nullish()
  .catch(undefined)
  .transform((items) => (items ?? []).flatMap((item) => (typeof item === 'object' && item !== null && !Array.isArray(item) ? [VERSION.parse(item)] : [])));

/**
 * A lyrics task as `GET /api/v1/lyrics/record-info` answers it in `data`: its `status` (what the state is read
 * from: an answer without one is not usable), its versions in `response.data` (or `response.lyricsData`), a
 * failure's `errorCode` and `errorMessage`.
 */
const RECORD = z.object({
  taskId: z.string().optional().catch(undefined),
  status: z.string(),
  type: z.string().nullish().catch(undefined),
  response: z
    .object({ data: VERSIONS, lyricsData: VERSIONS, errorMessage: z.string().nullish().catch(undefined) })
    .nullish()
    .catch(undefined),
  errorCode: z.union([z.number(), z.string()]).nullish().catch(undefined),
  errorMessage: z.string().nullish().catch(undefined),
});

type SunoapiLyricsRecord = z.infer<typeof RECORD>;
type Version = z.infer<typeof VERSION>;

/** The words of each failed state, as docs.sunoapi.org describes it, for a task that gives none of its own. */
const FAILED: Readonly<Record<string, string>> = {
  CREATE_TASK_FAILED: 'failed to create the task',
  GENERATE_LYRICS_FAILED: 'failed to generate lyrics',
  SENSITIVE_WORD_ERROR: 'content contains prohibited words',
  CALLBACK_EXCEPTION: 'an error occurred during the callback',
};

/**
 * Lyrics from a Suno-style aggregator in sunoapi.org's shape (sunoapi.org, api.box, kie.ai): `POST
 * {base}/api/v1/lyrics` (`prompt`, `callBackUrl`) answers `{code: 200, data: {taskId}}`; `GET
 * {base}/api/v1/lyrics/record-info?taskId=` reports the task (PENDING, SUCCESS, or a failed state) and its
 * versions (`text` with its section tags, `title`). It calls callBackUrl back once, at `complete` (or `error`):
 * a hint, the task is then asked about. Its answers carry their own `code` under HTTP 200, read as its music's.
 */
@Injectable()
export class SunoapiLyricsVendor implements LyricsVendor {
  static readonly protocol = SUNOAPI.protocol;
  readonly protocol = SunoapiLyricsVendor.protocol;
  static readonly models = SUNOAPI_LYRICS_MODELS;
  readonly models = SUNOAPI_LYRICS_MODELS;
  readonly minPollS = SUNOAPI.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: LyricsCreate): Promise<LyricsAnswer> {
    const body = sunoapiLyricsBody(create.request.prompt, create.callbackUrl);
    const answer = await this.client.call('POST', `${account.baseUrl}/api/v1/lyrics`, { body, auth: account.auth, failFast: true, refusal: sunoapiRefusal });
    return { upstreamId: sunoapiLyricsSubmitted(answer.json) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<LyricsStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/api/v1/lyrics/record-info?taskId=${encodeURIComponent(upstreamId)}`, {
      auth: account.auth,
      idempotent: true,
      once,
      refusal: sunoapiRefusal,
    });
    return sunoapiLyricsRecordStatus(answer.json);
  }
}

/**
 * Lyrics as the family's API takes them: the theme as `prompt` (required; at most SUNOAPI_LYRICS_PROMPT_MAX
 * characters, a longer one refused here naming it) and `callBackUrl` (the gateway's, else SUNOAPI_NO_CALLBACK:
 * it is required, and its polls do without).
 */
export function sunoapiLyricsBody(prompt: string, callbackUrl: string | undefined): Record<string, unknown> {
  if (!prompt.trim()) throw new UpstreamRefused('prompt: the sunoapi.org family writes lyrics on a theme, and none was given', 400, 'request');
  const chars = [...prompt].length;
  if (chars > SUNOAPI_LYRICS_PROMPT_MAX) throw new UpstreamRefused(`prompt: the sunoapi.org family takes at most ${SUNOAPI_LYRICS_PROMPT_MAX} characters of a lyrics theme; the request has ${chars}`, 400, 'request');
  return { prompt, callBackUrl: callbackUrl ?? SUNOAPI_NO_CALLBACK };
}

/** The task id a create answered (`{code: 200, msg, data: {taskId}}`); a refusal under HTTP 200 thrown as the client would; else unusable, naming the field. */
export function sunoapiLyricsSubmitted(json: Record<string, unknown>): string {
  checkSunoapiAnswer(json, true);
  return readAnswer(z.object({ code: z.literal(200), data: z.object({ taskId: z.string().min(1) }) }), json, 'the lyrics task').data.taskId;
}

/** A lyrics `record-info` answer (`{code: 200, msg, data: <task>}`) as a lyrics status; a refusal under HTTP 200 thrown as the client would. */
export function sunoapiLyricsRecordStatus(json: Record<string, unknown>): LyricsStatus {
  checkSunoapiAnswer(json);
  return sunoapiLyricsStatus(readAnswer(z.object({ data: RECORD }), json, 'the lyrics record-info query').data);
}

/**
 * SUCCESS (or CALLBACK_EXCEPTION, its call to our callBackUrl failed, with versions written) with each version
 * whose status is complete and whose text is not empty; a SUCCESS whose versions all failed is failed with
 * their words; one with no version at all is unusable, naming `data.response.data`. CREATE_TASK_FAILED,
 * GENERATE_LYRICS_FAILED, SENSITIVE_WORD_ERROR (a content refusal: the descriptor's words), CALLBACK_EXCEPTION
 * without versions, and any other `…_FAILED` or `…_ERROR` state failed with its words and state; anything else
 * (PENDING) still working.
 */
export function sunoapiLyricsStatus(record: SunoapiLyricsRecord): LyricsStatus {
  const versions = [...(record.response?.data ?? []), ...(record.response?.lyricsData ?? [])];
  const written = versions.filter((v) => nonEmpty(v.text) && (v.status ?? 'complete') !== 'failed').map(textOf);
  const secrets = [record.taskId].filter((id): id is string => typeof id === 'string' && id !== '');
  if ((record.status === 'SUCCESS' || record.status === 'CALLBACK_EXCEPTION') && written.length > 0) return { state: 'succeeded', lyrics: written };
  if (record.status === 'SUCCESS') {
    const failedWords = versions.map((v) => nonEmpty(v.errorMessage) ?? nonEmpty(v.error_message)).find((w) => w !== null);
    if (versions.length > 0) return { state: 'failed', reason: `${failedWords ?? FAILED.GENERATE_LYRICS_FAILED} (SUCCESS, no version written)`, secrets };
    throw new UnusableAnswer('the upstream answered the lyrics record-info query without a usable data.response.data (a SUCCESS with no version of the lyrics)');
  }
  const fallback = FAILED[record.status] ?? (/_(FAILED|ERROR)$/.test(record.status) ? 'the lyrics task failed' : undefined);
  if (fallback === undefined) return { state: 'working' };
  const words = nonEmpty(record.errorMessage) ?? nonEmpty(record.response?.errorMessage) ?? fallback;
  const code = record.errorCode !== null && record.errorCode !== undefined && record.errorCode !== '' ? `, code ${record.errorCode}` : '';
  return { state: 'failed', reason: `${words} (${record.status}${code})`, secrets };
}

function textOf(version: Version): LyricsText {
  return { title: nonEmpty(version.title), text: version.text! };
}

function nonEmpty(value: string | null | undefined): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}
