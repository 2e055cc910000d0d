import { Inject, Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { UpstreamGenerationFailed, UpstreamRefused } from '../../../infra/relay/upstream-client.js';
import type { SpeechAudio, SpeechModelSpec, SpeechVendor } from '../../../vendors/contracts/speech-vendor.js';
import { charsCostOf, type ServedOf, servedModels } from '../../channels/channel-models.js';
import type { CandidateChannel } from '../../channels/channel-router.js';
import { RelayFlow, type RelayOperation } from '../../channels/relay-flow.js';
import { speechChars } from '../speech.kind.js';
import { type FinishedSpeech, finishSpeech, SpeechUnusable } from '../speech-audio.js';
import { unmetSpeechFields, voiceIdOf, withChannelVoices } from '../speech-models.js';
import { speechRequestOf, type SpeechTask } from '../speech-task.js';
import type { SpeechContext, SpeechProvider } from './speech-provider.js';

/** The speech vendors' adapters by channel protocol (`src/vendors/speech-vendors.ts`; a gateway speaks the OpenAI speech door). */
export const SPEECH_VENDOR_ADAPTERS = Symbol('SPEECH_VENDOR_ADAPTERS');

/**
 * Relays speech tasks to the vendors behind the speech channels, on the one relay path (RelayFlow): a task goes
 * to a channel with a model that speaks exactly what it asks (its voice among the channel's, its input, speed and
 * instructions taken), priced per 1,000 characters; every speech vendor answers the audio in the step that sends
 * it (`{made}`), and a vendor's own failure goes on to the next capable channel.
 */
@Injectable()
export class RelaySpeechProvider implements SpeechProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly flow: RelayFlow,
    @Inject(SPEECH_VENDOR_ADAPTERS) private readonly vendors: Record<string, SpeechVendor>,
  ) {}

  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'speech', vendors: this.vendors, failsOver: true });
  }

  step(task: SpeechTask, ctx: SpeechContext): Promise<StepOutcome<FinishedSpeech>> {
    const request = speechRequestOf(task.params);
    const chars = speechChars(request.input);
    const modelFor = (channel: CandidateChannel) => modelOf(channel, task);
    const op: RelayOperation<SpeechVendor, never, FinishedSpeech> = {
      operation: 'speech',
      noun: 'speech',
      vendors: this.vendors,
      failsOver: true,
      fits: (channel) => modelFor(channel) !== undefined,
      costOf: (channel) => {
        const model = modelFor(channel);
        return model ? charsCostOf(model, chars) : null;
      },
      taken: (channel) => {
        const model = modelFor(channel);
        return { model: model?.name ?? request.model ?? '', cost: model ? charsCostOf(model, chars) : null };
      },
      create: async (channel, vendor) => {
        const model = modelFor(channel);
        if (!model) throw new UpstreamRefused(`channel ${channel.name} has no model that speaks what the task asks`, 0, 'request', true);
        const spec = withChannelVoices(model);
        return { made: await finished(await vendor.create(channel, { model: spec, request, voiceId: voiceIdOf(spec, request)! }), task, ctx) };
      },
      finished: () => Promise.resolve({ kind: 'failed', reason: 'a speech vendor answers at once; nothing is watched' }),
    };
    return this.flow.step(task, ctx, op);
  }
}

/**
 * A vendor's audio in the asked format. Audio that does not decode (cut short, damaged) made nothing usable
 * there, as a 5xx does not: a failed generation (UpstreamGenerationFailed, as the image relay's unreadable
 * image), so the task goes on to another channel that speaks it while it may, else ends with these words.
 */
async function finished(audio: SpeechAudio, task: SpeechTask, ctx: SpeechContext): Promise<FinishedSpeech> {
  try {
    return await finishSpeech(audio, task.params.format, (prefix, ext) => ctx.file(prefix, ext));
  } catch (err) {
    if (err instanceof SpeechUnusable) throw new UpstreamGenerationFailed(err.message, undefined, { status: 200 });
    throw err;
  }
}

/** The channel's first model (in its list's order) that speaks exactly what the task asks. */
function modelOf(channel: CandidateChannel, task: SpeechTask): ServedOf<SpeechModelSpec> | undefined {
  const request = speechRequestOf(task.params);
  return servedModels<SpeechModelSpec>(channel, 'speech').find((m) => (request.model === null || m.name === request.model) && unmetSpeechFields(withChannelVoices(m), request).length === 0);
}
