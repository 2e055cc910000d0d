import { Inject, Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { type SubmitMarks, UpstreamRefused } from '../../../infra/relay/upstream-client.js';
import type { CandidateChannel } from '../../channels/channel-router.js';
import { RelayFlow } from '../../channels/relay-flow.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import type { LyricsStatus, LyricsText, LyricsVendor } from '../../../vendors/contracts/lyrics-vendor.js';
import { UnusableAnswer } from '../../../vendors/contracts/vendor.js';
import { lyricsModelOn } from '../lyrics-models.js';
import { lyricsRequestOf, type LyricsTask } from '../lyrics-task.js';
import type { LyricsProvider } from './lyrics-provider.js';

/** The lyrics vendors' adapters by channel protocol (`src/vendors/lyrics-vendors.ts`; a gateway speaks the aggregator's). */
export const LYRICS_VENDOR_ADAPTERS = Symbol('LYRICS_VENDOR_ADAPTERS');

/**
 * Relays lyrics to the vendors behind the lyrics channels, on the one relay path (RelayFlow): a channel whose
 * vendor has a lyrics adapter and a model that takes the prompt (the one named); a synchronous vendor's lyrics
 * are the task's at once, an aggregator's task is watched (polled, or called back where it calls back) until it
 * ends. An upstream that fails the task for a reason of its own gives it to another capable channel (charged
 * once: the task's price is the gateway's). The vendor's ids never reach the caller's words.
 */
@Injectable()
export class RelayLyricsProvider implements LyricsProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly flow: RelayFlow,
    private readonly callbacks: UpstreamCallbackUrls,
    @Inject(LYRICS_VENDOR_ADAPTERS) private readonly vendors: Record<string, LyricsVendor>,
  ) {}

  /** The tasks a channel holds are asked about up to 50 at a time where its vendor has a batch query, else one at a time. */
  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'lyrics', vendors: this.vendors, failsOver: true });
  }

  step(task: LyricsTask, marks: SubmitMarks): Promise<StepOutcome<LyricsText[]>> {
    const request = lyricsRequestOf(task.params);
    const modelFor = (channel: CandidateChannel) => lyricsModelOn(channel, request);
    return this.flow.step<LyricsVendor, LyricsStatus, LyricsText[], undefined>(task, marks, {
      operation: 'lyrics',
      noun: 'lyrics task',
      vendors: this.vendors,
      failsOver: true,
      fits: (channel) => modelFor(channel) !== undefined,
      taken: (channel) => ({ model: modelFor(channel)?.name ?? request.model ?? '', cost: null }),
      create: async (channel, vendor) => {
        const model = modelFor(channel);
        if (!model) throw new UpstreamRefused(`channel ${channel.name} has no lyrics model that takes what the task asks`, 0, 'request', true);
        const callbackUrl = vendor.query && vendor.callsBack !== false ? this.callbacks.urlFor(task.id) : undefined;
        const answer = await vendor.create(channel, { request: { prompt: request.prompt, model: model.spec.id }, model: model.spec, taskId: task.id, callbackUrl });
        if ('made' in answer) {
          if (answer.made.length === 0) throw new UnusableAnswer('the upstream answered no lyrics');
          return { made: answer.made.slice(0, model.spec.takes) };
        }
        return { upstreamId: answer.upstreamId, callback: callbackUrl !== undefined };
      },
      failure: (status) => `the upstream failed the lyrics task: ${scrub(status.reason, [task.upstreamId, ...status.secrets])}`,
      tenantWords: (message) => scrub(message, [task.upstreamId]),
      finished: (status) => Promise.resolve({ kind: 'done', result: (status as Extract<LyricsStatus, { state: 'succeeded' }>).lyrics }),
    });
  }
}

/** An upstream's words without its ids or any URL: what a caller may read. */
function scrub(text: string, secrets: (string | null)[]): string {
  let out = text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>');
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('<upstream id>');
  return out.slice(0, 500);
}
