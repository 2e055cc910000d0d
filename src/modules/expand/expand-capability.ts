import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { ChannelRouter } from '../channels/channel-router.js';
import type { ExpandParams } from './expand-task.js';
import { StabilityOutpaintVendor } from './vendors/stability-outpaint.vendor.js';

/** The configured channels are read again after this long (a channel change shows within it). */
const CACHE_MS = 2000;

/**
 * Refuses at submission an expand no configured channel could ever make: Kling's API (and a gateway)
 * makes every expand the door accepts, so only when every expand channel (of any status) is Stability's
 * and Stability cannot make it (a watermark, a margin over 2000 px, an input outside its sizes). An image
 * given by URL is decided when it is read; with no channel yet, the task waits for one as any relayed task.
 */
@Injectable()
export class ExpandCapability {
  private cached?: { at: number; protocols: Promise<string[]> };

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  async check(params: ExpandParams): Promise<void> {
    if (this.config.kinds.expand.provider !== 'relay' || !params.image_width || !params.image_height) return;
    const protocols = await this.protocols();
    if (protocols.length === 0 || protocols.some((p) => p !== StabilityOutpaintVendor.protocol)) return;
    const unmet = StabilityOutpaintVendor.unmet(params, { width: params.image_width, height: params.image_height });
    if (unmet) throw new AppError('INVALID_PARAMETER', `${unmet}; no configured channel makes it (only Stability's outpaint serves expand here)`);
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
