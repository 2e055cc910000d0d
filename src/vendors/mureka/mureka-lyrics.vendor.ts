import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { LyricsAnswer, LyricsCreate, LyricsModelSpec, LyricsRequest, LyricsText, LyricsVendor } from '../contracts/lyrics-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { MUREKA, murekaRefusal } from './mureka.vendor.js';

/**
 * Its lyrics prompt's limit: Mureka's reference names none for `POST /v1/lyrics/generate`; the 1,024 characters
 * of its song and instrumental `prompt` (what its music models take as a description, written into lyrics by
 * this same route) are kept.
 */
export const MUREKA_LYRICS_PROMPT_MAX = 1024;

/** Mureka's lyrics generation as a model (its route takes none): one version a call. */
export const MUREKA_LYRICS_MODELS: readonly LyricsModelSpec[] = [{ id: 'mureka-lyrics', promptMax: MUREKA_LYRICS_PROMPT_MAX, takes: 1 }];

/** Its answer (`{title, lyrics}`): the lyrics are what is asked for; a title that cannot be read is left out. */
const WRITTEN = z.object({ lyrics: z.string().refine((text) => text.trim() !== '', 'empty'), title: z.string().nullish().catch(undefined) });

/**
 * Mureka's lyrics generation, synchronous: `POST /v1/lyrics/generate` (`prompt`, required) answers `{title,
 * lyrics}`, the lyrics with their section tags. Errors are `{error: {message}, trace_id}` under their HTTP
 * status (400 the request, and its moderation's words: a content refusal by the words every vendor uses, as
 * its descriptor says; 401 the key; 429 busy, or "exceeded your current quota": the account's credit); a 5xx is
 * a generation that failed and left nothing behind: busy, so another channel may take it.
 */
@Injectable()
export class MurekaLyricsVendor implements LyricsVendor {
  static readonly protocol = MUREKA.protocol;
  static readonly models = MUREKA_LYRICS_MODELS;
  readonly protocol = MurekaLyricsVendor.protocol;
  readonly models = MUREKA_LYRICS_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = MUREKA.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { request }: LyricsCreate): Promise<LyricsAnswer> {
    const body = murekaLyricsRequestBody(request);
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', `${account.baseUrl}/v1/lyrics/generate`, { body, auth: account.auth, failFast: true, refusal: murekaRefusal, timeoutMs: SYNC_GENERATION_TIMEOUT_MS });
      return { made: [murekaLyricsText(answer.json)] };
    });
  }
}

/** Lyrics as `POST /v1/lyrics/generate` takes them: the theme as `prompt` (required; a longer one than MUREKA_LYRICS_PROMPT_MAX refused here, naming it). */
export function murekaLyricsRequestBody(request: LyricsRequest): Record<string, unknown> {
  if (!request.prompt.trim()) throw new UpstreamRefused('prompt: Mureka writes lyrics on a theme (its prompt is required), and none was given', 400, 'request');
  const chars = [...request.prompt].length;
  if (chars > MUREKA_LYRICS_PROMPT_MAX) throw new UpstreamRefused(`prompt: Mureka is given at most ${MUREKA_LYRICS_PROMPT_MAX} characters of a lyrics theme here; the request has ${chars}`, 400, 'request');
  return { prompt: request.prompt };
}

/** Its answer as one version of lyrics; without usable `lyrics` it is unusable, naming the field. */
export function murekaLyricsText(json: Record<string, unknown>): LyricsText {
  const written = readAnswer(WRITTEN, json, 'the lyrics generation');
  return { title: written.title?.trim() ? written.title : null, text: written.lyrics };
}
