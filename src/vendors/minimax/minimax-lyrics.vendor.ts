import { Injectable } from '@nestjs/common';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { LyricsAnswer, LyricsCreate, LyricsModelSpec, LyricsRequest, LyricsText, LyricsVendor } from '../contracts/lyrics-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { MINIMAX_LYRICS_PROMPT_MAX, minimaxLyricsWritten } from './minimax-music.vendor.js';
import { MINIMAX } from './minimax.vendor.js';

/**
 * MiniMax's lyrics generation as a model (its route takes none): a theme of up to 2,000 characters (its
 * reference's limit on `prompt`), one version a call.
 */
export const MINIMAX_LYRICS_MODELS: readonly LyricsModelSpec[] = [{ id: 'minimax-lyrics', promptMax: MINIMAX_LYRICS_PROMPT_MAX, takes: 1 }];

/**
 * MiniMax's Lyrics Generation, synchronous: `POST /v1/lyrics_generation` (`mode: write_full_song`, `prompt`:
 * the theme) answers `{song_title, style_tags, lyrics, base_resp}`, the lyrics with their section tags. Its
 * answers are read as its music's (`minimaxSyncChecked`): base_resp 1002 busy, 1004 and 2049 the credentials,
 * 1008 the balance, 1026 and 1027 its content refusals ("content refused: … (code 1026)", its descriptor's
 * words), 2013 the parameters; its own failures (1000, 1001, 1024, 1033) and a 5xx a generation that failed and
 * left nothing behind: busy, so another channel may take it. An answer without lyrics is unusable, naming
 * `lyrics`.
 */
@Injectable()
export class MinimaxLyricsVendor implements LyricsVendor {
  static readonly protocol = MINIMAX.protocol;
  static readonly models = MINIMAX_LYRICS_MODELS;
  readonly protocol = MinimaxLyricsVendor.protocol;
  readonly models = MINIMAX_LYRICS_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = MINIMAX.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { request }: LyricsCreate): Promise<LyricsAnswer> {
    const body = minimaxLyricsRequestBody(request);
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', `${account.baseUrl}/v1/lyrics_generation`, { body, auth: account.auth, failFast: true, timeoutMs: SYNC_GENERATION_TIMEOUT_MS });
      return { made: [minimaxLyricsText(answer.json)] };
    });
  }
}

/**
 * The lyrics generation's body: `write_full_song` (a whole song, as opposed to `edit`), the theme as `prompt`
 * where there is one (empty: a song of its choosing, as its reference allows); a theme over its 2,000
 * characters (code points, as MiniMax counts them) refused here naming `prompt`.
 */
export function minimaxLyricsRequestBody(request: LyricsRequest): Record<string, unknown> {
  const chars = [...request.prompt].length;
  if (chars > MINIMAX_LYRICS_PROMPT_MAX) throw new UpstreamRefused(`prompt: MiniMax takes at most ${MINIMAX_LYRICS_PROMPT_MAX} characters of a lyrics theme; the request has ${chars}`, 400, 'request');
  return { mode: 'write_full_song', ...(request.prompt.trim() ? { prompt: request.prompt } : {}) };
}

/** Its answer as one version of lyrics: base_resp checked, then `lyrics` (required), `song_title` and `style_tags` where given. */
export function minimaxLyricsText(json: Record<string, unknown>): LyricsText {
  const written = minimaxLyricsWritten(json);
  return { title: written.title ?? null, text: written.lyrics, style: written.style ?? null };
}
