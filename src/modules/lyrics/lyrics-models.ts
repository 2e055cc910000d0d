import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import type { LyricsModelSpec, LyricsRequest } from '../../vendors/contracts/lyrics-vendor.js';
import { LYRICS_VENDORS } from '../../vendors/lyrics-vendors.js';
import { servedModels, type ServedOf } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { type Offered, OfferCache } from '../channels/model-offer.js';
import type { LyricsModelDto } from './dto/lyrics-model.dto.js';

export type OfferedLyricsModel = Offered<LyricsModelSpec>;

/** The characters of a prompt as the models count them (code points). */
export function promptChars(prompt: string): number {
  return [...prompt].length;
}

/** Whether a model writes lyrics from this request: the one named (or any), its prompt within the model's limit. */
export function writesLyrics(model: { name: string; spec: LyricsModelSpec }, request: LyricsRequest): boolean {
  return (request.model === null || model.name === request.model) && promptChars(request.prompt) <= model.spec.promptMax;
}

/** The model a channel writes the task with: the one named, or its first (in its list's order) that takes the prompt; undefined: none. */
export function lyricsModelOn(channel: { protocol: string; models: unknown; operations?: readonly string[] }, request: LyricsRequest): ServedOf<LyricsModelSpec> | undefined {
  return servedModels<LyricsModelSpec>(channel, 'lyrics').find((m) => writesLyrics(m, request));
}

/**
 * The lyrics models callers may ask for: those the lyrics channels serve (any status: a disabled channel may come
 * back), or, with the sandbox, every vendor's model as its catalog describes it (so the sandbox refuses what
 * production would, and writes as many versions as the model would).
 */
@Injectable()
export class LyricsModels {
  private readonly cache = new OfferCache<LyricsModelSpec>(() => this.read(), () => this.router.writes);

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedLyricsModel[]> {
    return this.cache.offered();
  }

  private async read(): Promise<OfferedLyricsModel[]> {
    if (this.config.kinds.lyrics.provider === 'sandbox') return LYRICS_VENDORS.flatMap((v) => v.models.map((spec): OfferedLyricsModel => ({ name: spec.id, vendor: v.protocol, spec })));
    // one entry per (name, vendor, vendor model), however many channels serve it
    const offered = new Map<string, OfferedLyricsModel>();
    for (const channel of await this.router.configuredFor('lyrics')) {
      for (const m of servedModels<LyricsModelSpec>(channel, 'lyrics')) offered.set(`${m.name}\n${channel.protocol}\n${m.spec.id}`, { name: m.name, vendor: channel.protocol, spec: m.spec });
    }
    return [...offered.values()];
  }

  /** The model the sandbox writes a request with: the one named, else the first offered that takes the prompt. */
  async modelFor(request: LyricsRequest): Promise<OfferedLyricsModel | undefined> {
    return (await this.offered()).find((m) => writesLyrics(m, request));
  }

  /** `GET /models`' lyrics entries. */
  async entries(): Promise<LyricsModelDto[]> {
    const perTask = this.config.kinds.lyrics.prices.task;
    return (await this.offered()).map(({ name, vendor, spec }) => ({
      name,
      operation: 'lyrics' as const,
      vendor,
      vendor_model: spec.id,
      max_prompt_chars: spec.promptMax,
      versions: spec.takes,
      credits_per_task: perTask,
    }));
  }

  /**
   * Refuses (400) a request no configured model could write, naming the field as the door names it (`labels`):
   * an unknown model (or none configured), else a prompt longer than every model named takes.
   */
  async check(request: LyricsRequest, labels: { model: string; prompt: string }): Promise<void> {
    const all = await this.offered();
    const named = request.model === null ? all : all.filter((m) => m.name === request.model);
    if (named.length === 0) {
      const names = [...new Set(all.map((m) => m.name))];
      const message =
        request.model === null
          ? `${labels.model}: no lyrics model is configured`
          : `${labels.model}: no configured lyrics model is named ${request.model} (the models: ${names.join(', ') || 'none'})`;
      throw AppError.invalidParameter(message, { param: labels.model, rule: 'value' });
    }
    if (named.some((m) => writesLyrics(m, request))) return;
    const max = Math.max(...named.map((m) => m.spec.promptMax));
    const what = request.model === null ? 'a configured lyrics model takes' : `the model ${request.model} takes`;
    throw AppError.invalidParameter(`${labels.prompt}: the longest prompt ${what} is ${max} characters (got ${promptChars(request.prompt)})`, { param: labels.prompt, rule: 'too_long' });
  }
}
