import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import type { ExpandVendor } from '../../vendors/contracts/expand-vendor.js';
import { ChannelRouter } from '../channels/channel-router.js';
import type { ExpandParams } from './expand-task.js';
import { EXPAND_VENDOR_ADAPTERS } from './providers/relay-expand.provider.js';

/** The configured channels are read again after this long (a channel change shows within it). */
const CACHE_MS = 2000;

/**
 * Refuses at submission an expand no configured channel could ever make: only when every expand channel
 * (of any status) has a vendor that says it cannot (its adapter's `unmet`: Stability's for a watermark, a
 * margin over 2000 px, an input outside its sizes; Kling's API and a gateway make every expand the door
 * accepts). An image given by URL is decided when it is read; with no channel yet, the task waits for one
 * as any relayed task.
 */
@Injectable()
export class ExpandCapability {
  private cached?: { at: number; protocols: Promise<string[]> };

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
    @Inject(EXPAND_VENDOR_ADAPTERS) private readonly vendors: Record<string, ExpandVendor>,
  ) {}

  async check(params: ExpandParams): Promise<void> {
    if (this.config.kinds.expand.provider !== 'relay' || !params.image_width || !params.image_height) return;
    const protocols = await this.protocols();
    const size = { width: params.image_width, height: params.image_height };
    const unmet = protocols.map((p) => this.vendors[p]?.unmet?.(params, size) ?? null);
    if (unmet.length === 0 || unmet.some((u) => u === null)) return;
    throw new AppError('INVALID_PARAMETER', `${unmet[0]}; no configured channel makes it (its channels' vendors: ${[...new Set(protocols)].join(', ')})`);
  }

  private protocols(): Promise<string[]> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.protocols;
    const protocols = this.router.configuredFor('expand').then(
      (channels) => channels.map((c) => c.protocol),
      (err: unknown) => {
        this.cached = undefined;
        throw err;
      },
    );
    this.cached = { at: Date.now(), protocols };
    return protocols;
  }
}
