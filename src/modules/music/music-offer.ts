import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { MUSIC_FIELDS, type MusicAsk, type MusicField, type MusicModelSpec, unmetMusicFields } from '../../vendors/contracts/music-vendor.js';
import { MUSIC_VENDORS } from '../../vendors/music-vendors.js';
import { servedModels } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { type Offered, OfferCache, refuseUnmade } from '../channels/model-offer.js';
import type { MusicModelDto } from './dto/music-model.dto.js';

export type OfferedMusicModel = Offered<MusicModelSpec>;

/** What the music check needs of its fields. */
const MUSIC_RULES = { fields: MUSIC_FIELDS, unmet: unmetMusicFields, describe };

/**
 * The music models callers may ask for: those the music channels serve (any status: a disabled channel may
 * come back), or, with the sandbox, every vendor's model as its catalog describes it (so the sandbox refuses
 * what production would, and makes as many takes, as long, as the model would).
 */
@Injectable()
export class MusicModels {
  private readonly cache = new OfferCache<MusicModelSpec>(() => this.read(), () => this.router.writes);

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedMusicModel[]> {
    return this.cache.offered();
  }

  /** Refuses (400) a request no configured model could ever make, naming the door's fields (`labels`). */
  async check(ask: MusicAsk, labels: Record<MusicField, string>): Promise<void> {
    refuseUnmade(await this.offered(), ask, MUSIC_RULES, labels);
  }

  /**
   * The takes a new task is given clip ids for: the most any model that could make it makes (a task that a
   * one-take model makes in the end keeps one: the other clip is dropped when it succeeds).
   */
  async takesFor(ask: MusicAsk): Promise<number> {
    const able = (await this.offered()).filter((m) => (ask.model === undefined ? !m.namedOnly : m.name === ask.model) && unmetMusicFields(m.spec, ask).length === 0);
    return Math.max(1, ...able.map((m) => m.spec.takes));
  }

  /** `GET /models`' music entries. */
  async entries(): Promise<MusicModelDto[]> {
    const perTask = this.config.kinds.music.prices.task;
    return (await this.offered()).map(({ name, vendor, spec }) => ({
      name,
      operation: 'music' as const,
      vendor,
      vendor_model: spec.id,
      lyrics: spec.lyrics,
      description: spec.description,
      instrumental: spec.instrumental,
      instrumental_only: spec.instrumentalOnly === true,
      continues_stored_clips: spec.continueUpload,
      continues_own_clips: spec.continueOwn,
      ...(spec.durationS ? { durations_s: [spec.durationS.min, spec.durationS.max] } : {}),
      takes: spec.takes,
      format: spec.format,
      ...(spec.lyricsMax !== null ? { max_lyrics_chars: spec.lyricsMax } : {}),
      ...(spec.descriptionMax !== null ? { max_description_chars: spec.descriptionMax } : {}),
      ...(spec.styleMax !== null ? { max_style_chars: spec.styleMax } : {}),
      avoid_style: spec.avoidStyle !== false,
      ...(spec.needsStyle ? { needs_style: true } : {}),
      credits_per_task: perTask,
    }));
  }

  private async read(): Promise<OfferedMusicModel[]> {
    if (this.config.kinds.music.provider === 'sandbox') return MUSIC_VENDORS.flatMap((v) => v.models.map((spec): OfferedMusicModel => ({ name: spec.id, vendor: v.protocol, spec })));
    // one entry per (name, vendor, vendor model), however many channels serve it
    const offered = new Map<string, OfferedMusicModel>();
    for (const channel of await this.router.configuredFor('music')) {
      for (const m of servedModels<MusicModelSpec>(channel, 'music')) offered.set(`${m.name}\n${channel.protocol}\n${m.spec.id}`, { name: m.name, vendor: channel.protocol, spec: m.spec });
    }
    return [...offered.values()];
  }
}

/** The asked value of a field, in words. */
function describe(field: MusicField, ask: MusicAsk): string {
  switch (field) {
    case 'model':
      return `model ${ask.model}`;
    case 'lyrics':
      return `song with lyrics of ${[...(ask.lyrics ?? '')].length} characters`;
    case 'description':
      return `song written from a description of ${[...(ask.description ?? '')].length} characters`;
    case 'style':
      return ask.style === null ? 'song with no style given (with lyrics, without a description or as a continuation)' : `style of ${[...ask.style].length} characters`;
    case 'avoidStyle':
      return `style to avoid`;
    case 'instrumental':
      return ask.instrumental ? 'instrumental song' : 'song with vocals';
    case 'durationS':
      return `duration of ${ask.durationS} s`;
    case 'continues':
      return ask.continues === 'own' ? 'continuation of a clip' : 'continuation of a clip stored here (an upload, a joined song or another vendor\'s take)';
  }
}
