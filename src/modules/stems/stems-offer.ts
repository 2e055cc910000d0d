import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { STEMS_FIELDS, type StemsAsk, type StemsField, type StemsModelSpec, unmetStemsFields } from '../../vendors/contracts/stems-vendor.js';
import { STEMS_VENDORS } from '../../vendors/stems-vendors.js';
import { servedModels } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { type Offered, OfferCache, refuseUnmade } from '../channels/model-offer.js';
import type { StemsModelDto } from './dto/stems-model.dto.js';

export type OfferedStemsModel = Offered<StemsModelSpec>;

const STEMS_RULES = { fields: STEMS_FIELDS, unmet: unmetStemsFields, describe };

/**
 * The stems models callers may ask for: those the stems channels serve (any status: a disabled channel may come
 * back), or, with the sandbox, every vendor's model as its catalog describes it (the sandbox refuses what
 * production would, and makes as many stems, named as the model names them).
 */
@Injectable()
export class StemsModels {
  private readonly cache = new OfferCache<StemsModelSpec>(() => this.read(), () => this.router.writes);

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedStemsModel[]> {
    return this.cache.offered();
  }

  /** Refuses (400) a request no configured model could ever make, naming the door's fields (`labels`). */
  async check(ask: StemsAsk, labels: Record<StemsField, string>): Promise<void> {
    refuseUnmadeStems(await this.offered(), ask, labels);
  }

  /** `GET /models`' stems entries. */
  async entries(): Promise<StemsModelDto[]> {
    const perTask = this.config.kinds.stems.prices.task;
    return (await this.offered()).map(({ name, vendor, spec }) => ({
      name,
      operation: 'stems' as const,
      vendor,
      vendor_model: spec.id,
      splits: Object.keys(spec.splits),
      stems: Object.fromEntries(Object.entries(spec.splits).map(([split, names]) => [split, [...(names ?? [])]])),
      own_clips_only: spec.source === 'own',
      credits_per_task: perTask,
    }));
  }

  private async read(): Promise<OfferedStemsModel[]> {
    if (this.config.kinds.stems.provider === 'sandbox') return STEMS_VENDORS.flatMap((v) => v.models.map((spec): OfferedStemsModel => ({ name: spec.id, vendor: v.protocol, spec })));
    const offered = new Map<string, OfferedStemsModel>();
    for (const channel of await this.router.configuredFor('stems')) {
      for (const m of servedModels<StemsModelSpec>(channel, 'stems')) offered.set(`${m.name}\n${channel.protocol}\n${m.spec.id}`, { name: m.name, vendor: channel.protocol, spec: m.spec });
    }
    return [...offered.values()];
  }
}

/** Refuses (400) a stems request none of `offered` makes, naming the door's fields (`labels`): a split no model makes, a clip no model takes. */
export function refuseUnmadeStems(offered: OfferedStemsModel[], ask: StemsAsk, labels: Record<StemsField, string>): void {
  refuseUnmade(offered, ask, STEMS_RULES, labels);
}

/** The asked value of a field, in words. */
function describe(field: StemsField, ask: StemsAsk): string {
  switch (field) {
    case 'model':
      return `model ${ask.model}`;
    case 'split':
      return ask.split === 'two' ? 'split into two stems (vocals and instrumental)' : 'split into every stem it makes';
    case 'clip':
      return 'split of a clip no vendor of its holds (an upload, a joined song or another vendor\'s take)';
  }
}
