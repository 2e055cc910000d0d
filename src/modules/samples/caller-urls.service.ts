import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import { SamplesService } from './samples.service.js';

/** The rule a refusal of a caller's URL ends with. */
const RULE = '(the gateway reaches only public addresses for a caller)';

/**
 * The doors' check of the URLs a caller gives (images, keyframes, audio, callback URLs): what can be judged
 * from the URL alone is refused at submission, 400 naming the field (SafeFetchService.callerUrlRefusal: a
 * non-public IP literal, a `localhost` name, a host of OUTBOUND_ALLOW_HOSTS), so a task never starts that
 * could not fetch its input, and no URL on the gateway's own network is handed on to an upstream. A name
 * whose addresses are private is refused when it is fetched (the task fails, the callback is never sent).
 * The service's own sample files under the request's base are read here, never fetched: they pass.
 */
@Injectable()
export class CallerUrls {
  constructor(
    private readonly fetcher: SafeFetchService,
    private readonly samples: SamplesService,
  ) {}

  /** Throws INVALID_PARAMETER naming `field` when `url` may not be given; absent URLs pass. */
  check(field: string, url: string | null | undefined, requestBase?: string | null): void {
    if (!url || this.samples.resolve(url, requestBase ?? null)) return;
    const refusal = this.fetcher.callerUrlRefusal(url);
    if (refusal) throw new AppError('INVALID_PARAMETER', `${field} must be a public http(s) URL: ${refusal} ${RULE}`);
  }

  /**
   * For a relay, before it hands a caller's URL to an upstream (which fetches it from its own network, and an
   * in-cluster upstream's network is the gateway's): the failure reason when its host resolves to a non-public
   * address or not at all, naming `field`; null when it may be handed on. The service's own samples, under
   * PUBLIC_BASE_URL or the task's base (`taskBase`), pass as the submission's check passed them: they are the
   * gateway's own files, handed on as its other files are (an uploaded image's or a fitted frame's signed link
   * is under that same base); one no upstream could reach as a link is sent inline where the vendor takes
   * images so (`unreachableSample`). Before, a sample under the task's base passed the submission and failed
   * the task here.
   */
  async handOffRefusal(field: string, url: string | null | undefined, taskBase: string | null): Promise<string | null> {
    if (!url || this.ownSample(url, taskBase)) return null;
    const refusal = await this.fetcher.callerUrlHandOffRefusal(url);
    return refusal ? `${field} must be a public http(s) URL: ${refusal} ${RULE}` : null;
  }

  /** Whether `url` is one of the service's own sample files, under PUBLIC_BASE_URL or the task's base: read here, never fetched. */
  ownSample(url: string, taskBase: string | null): boolean {
    return this.samples.resolve(url, taskBase) !== undefined;
  }

  /**
   * Whether `url` is a sample of the service's that could not be handed to an upstream as a URL (under the
   * task's base, not PUBLIC_BASE_URL, on an address the hand-off rules refuse): a relay sends it as the
   * gateway's own file instead (hosted: inline where the vendor takes images so). A sample an upstream may be
   * sent as a link (under PUBLIC_BASE_URL, or a host of OUTBOUND_ALLOW_HOSTS) is sent as it was given.
   */
  async unreachableSample(url: string, taskBase: string | null): Promise<boolean> {
    if (!this.ownSample(url, taskBase) || this.ownSample(url, null)) return false;
    return (await this.fetcher.callerUrlHandOffRefusal(url)) !== null;
  }
}
