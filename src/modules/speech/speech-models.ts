import { Injectable } from '@nestjs/common';
import { AppError, type ParamRule } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { SPEECH_MAX_INPUT, type SpeechModelSpec, type SpeechRequest } from '../../vendors/contracts/speech-vendor.js';
import { SPEECH_VENDORS } from '../../vendors/speech-vendors.js';
import { servedModels, type ServedOf } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { type Offered, OfferCache } from '../channels/model-offer.js';
import type { SpeechModelDto } from './dto/speech-model.dto.js';

export type OfferedSpeechModel = Offered<SpeechModelSpec>;

/** The sandbox's model that speaks anything: asked for by name only. */
export const SANDBOX_SPEECH_MODEL = 'sandbox';

/** The fields of a speech request a model may not honour, in the order a refusal names them. */
const FIELDS = ['voice', 'input', 'instructions', 'speed'] as const;
type SpeechField = (typeof FIELDS)[number];

/** The fields of `request` this model cannot honour. */
export function unmetSpeechFields(spec: SpeechModelSpec, request: SpeechRequest): SpeechField[] {
  const unmet: SpeechField[] = [];
  if (voiceIdOf(spec, request) === undefined) unmet.push('voice');
  if ([...request.input].length > spec.maxInput) unmet.push('input');
  if (request.instructions !== null && !spec.instructions) unmet.push('instructions');
  if (request.speed !== 1 && (!spec.speed || request.speed < spec.speed.min || request.speed > spec.speed.max)) unmet.push('speed');
  return unmet;
}

/** The vendor's voice id a model speaks the asked voice in (its mapping of the name, or the id asked where it takes ids); undefined: it cannot. */
export function voiceIdOf(spec: SpeechModelSpec, request: Pick<SpeechRequest, 'voice'>): string | undefined {
  if ('name' in request.voice) return spec.voices[request.voice.name];
  return spec.voiceIds ? request.voice.id : undefined;
}

/** A served model's spec with the channel's voices (`models[].voices`) over the model's own. */
export function withChannelVoices(served: ServedOf<SpeechModelSpec>): SpeechModelSpec {
  return served.voices ? { ...served.spec, voices: { ...served.spec.voices, ...served.voices } } : served.spec;
}

/**
 * The speech models callers may ask for: those the speech channels serve (any status), with each channel's
 * voices, or, with the sandbox, every vendor's model as its catalog describes it (so the sandbox refuses what
 * production would) and the model `sandbox`, which speaks any voice and is used only when named.
 */
@Injectable()
export class SpeechModels {
  private readonly cache = new OfferCache<SpeechModelSpec>(() => this.read(), () => this.router.writes);

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedSpeechModel[]> {
    return this.cache.offered();
  }

  private async read(): Promise<OfferedSpeechModel[]> {
    if (this.config.kinds.speech.provider === 'sandbox') {
      const catalogs = SPEECH_VENDORS.flatMap((v) => v.models.map((spec): OfferedSpeechModel => ({ name: spec.id, vendor: v.protocol, spec })));
      const voices = Object.fromEntries(catalogs.flatMap((m) => Object.keys(m.spec.voices)).map((v) => [v, v]));
      const sandbox: SpeechModelSpec = { id: SANDBOX_SPEECH_MODEL, voices, voiceIds: true, maxInput: SPEECH_MAX_INPUT, instructions: true, speed: { min: 0.25, max: 4 } };
      return [...catalogs, { name: SANDBOX_SPEECH_MODEL, vendor: 'sandbox', spec: sandbox, namedOnly: true }];
    }
    const offered = new Map<string, OfferedSpeechModel>();
    for (const channel of await this.router.configuredFor('speech')) {
      for (const m of servedModels<SpeechModelSpec>(channel, 'speech')) {
        const spec = withChannelVoices(m);
        // two channels declaring one vendor model otherwise are two models
        const key = `${m.name}\n${channel.protocol}\n${m.declared ? JSON.stringify({ ...m.spec, voices: undefined }) : spec.id}`;
        const known = offered.get(key);
        // the same model on several channels speaks the union of their voices
        offered.set(key, { name: m.name, vendor: channel.protocol, spec: known ? { ...spec, voices: { ...known.spec.voices, ...spec.voices } } : spec, ...(m.declared ? { declared: m.declared } : {}) });
      }
    }
    return [...offered.values()];
  }

  /** `GET /models`' speech entries. */
  async entries(): Promise<SpeechModelDto[]> {
    const perK = this.config.kinds.speech.prices.kchars;
    return (await this.offered()).map(({ name, vendor, spec, declared }) => ({
      name,
      operation: 'speech' as const,
      vendor,
      vendor_model: spec.id,
      declared: declared === true,
      voices: Object.keys(spec.voices),
      voice_ids: spec.voiceIds,
      // what a request may hold: the door takes at most SPEECH_MAX_INPUT (OpenAI's 4,096) whatever the vendor takes
      max_input_chars: Math.min(spec.maxInput, SPEECH_MAX_INPUT),
      instructions: spec.instructions,
      ...(spec.speed ? { speed: [spec.speed.min, spec.speed.max] } : {}),
      credits_per_1k_chars: perK,
    }));
  }

  /**
   * Refuses (400) a request no configured model could make, naming the field as the door names it (`labels`):
   * an unknown model; else the field the closest model (fewest unmet fields) cannot honour, with what it takes.
   */
  async check(request: SpeechRequest, labels: Record<SpeechField | 'model', string>): Promise<void> {
    const refused = speechRefusal(await this.offered(), request, labels);
    if (refused) throw refused;
  }
}

/**
 * Why no model of `all` can make `request` (400, naming the field as the door names it, `labels`): an unknown
 * model; else the field the closest model (fewest unmet fields) cannot honour, with what the models take.
 * Undefined: a model can.
 */
export function speechRefusal(all: readonly OfferedSpeechModel[], request: SpeechRequest, labels: Record<SpeechField | 'model', string>): AppError | undefined {
  const named = request.model === null ? all.filter((m) => !m.namedOnly) : all.filter((m) => m.name === request.model);
  if (named.length === 0) {
    const names = [...new Set(all.map((m) => m.name))];
    return refusal(labels.model, 'value', request.model === null ? `${labels.model}: no speech model is configured` : `${labels.model}: no configured speech model is named ${request.model} (the models: ${names.join(', ') || 'none'})`);
  }
  const ranked = named.map((m) => ({ m, unmet: unmetSpeechFields(m.spec, request) })).sort((a, b) => a.unmet.length - b.unmet.length);
  if (ranked[0].unmet.length === 0) return undefined;
  const { m, unmet } = ranked[0];
  const field = unmet[0];
  const label = labels[field];
  // "no configured speech model speaks …" when none was named, "the model tts-1 does not speak …" when one was
  const [who, not] = request.model === null ? ['no configured speech model', ''] : [`the model ${m.name}`, ' does not'];
  const verb = (third: string, base: string) => (not ? `${not} ${base}` : ` ${third}`);
  if (field === 'voice') {
    const asked = 'name' in request.voice ? request.voice.name : `{"id": "${request.voice.id}"}`;
    const voices = [...new Set(named.flatMap((n) => Object.keys(n.spec.voices)))];
    return refusal(label, 'value', `${label}: ${who}${verb('speaks', 'speak')} the voice ${asked}; the voices: ${voices.join(', ')}${'id' in request.voice ? ' (a voice id only where a model takes ids)' : ''}`);
  }
  if (field === 'input') return refusal(label, 'too_long', `${label}: ${who} takes at most ${Math.max(...named.map((n) => n.spec.maxInput))} characters (not ${[...request.input].length})`);
  if (field === 'instructions') return refusal(label, 'value', `${label}: ${who}${verb('takes', 'take')} instructions (the models that do: ${all.filter((n) => n.spec.instructions).map((n) => n.name).join(', ') || 'none'})`);
  const ranges = named.map((n) => n.spec.speed).filter((s) => s !== null);
  return refusal(label, request.speed < 1 ? 'below_min' : 'above_max', `${label}: ${who}${verb('speaks', 'speak')} at ${request.speed}; ${ranges.length ? `from ${Math.min(...ranges.map((r) => r!.min))} to ${Math.max(...ranges.map((r) => r!.max))}` : 'only at 1'}`);
}

function refusal(param: string, rule: ParamRule, message: string): AppError {
  return AppError.invalidParameter(message, { param, rule });
}
