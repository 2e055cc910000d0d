import { AppError } from '../../common/errors/app-error.js';
import { expandModelOf } from '../../vendors/expand-vendors.js';
import { videoCatalogOf } from '../../vendors/video-vendors.js';
import type { VideoModelSpec } from '../../vendors/contracts/video-request.js';

/** A model a channel serves, as stored (`channels.models`). */
export type ChannelModel = {
  name: string;
  vendor_model: string;
  price?: { per_second?: Record<string, number>; per_image?: number };
};

/** The expand model a channel serves, under the name it lists it by (its vendor's id when it lists none), with its price. */
export function servedExpandModel(channel: { protocol: string; models: unknown }): { name: string; price?: ChannelModel['price'] } {
  const listed = Array.isArray(channel.models) ? (channel.models as ChannelModel[]) : [];
  const id = expandModelOf(channel.protocol);
  const model = listed.find((m) => m.vendor_model === id);
  return model ? { name: model.name, ...(model.price ? { price: model.price } : {}) } : { name: id };
}

/** A model a channel serves for video: the callers' name and what the vendor's model can do. */
export interface ServedModel {
  name: string;
  spec: VideoModelSpec;
  price?: ChannelModel['price'];
}

/** The video models a channel serves: those it lists, or its vendor's whole catalog under the vendor's ids. */
export function servedVideoModels(channel: { protocol: string; models: unknown }): ServedModel[] {
  const catalog = videoCatalogOf(channel.protocol);
  const listed = Array.isArray(channel.models) ? (channel.models as ChannelModel[]) : [];
  if (listed.length === 0) return catalog.map((spec) => ({ name: spec.id, spec }));
  return listed.flatMap((m) => {
    const spec = catalog.find((s) => s.id === m.vendor_model);
    return spec ? [{ name: m.name, spec, ...(m.price ? { price: m.price } : {}) }] : [];
  });
}

const RESOLUTION_KEYS = new Set(['*', '540p', '720p', '1080p', '4k']);

/** Refuses a list of models the channel's vendor does not offer, a name given twice, or a malformed price. */
export function checkModels(protocol: string, operations: readonly string[], models: readonly ChannelModel[]): void {
  if (models.length === 0) return;
  if (!operations.includes('video')) {
    if (!operations.includes('expand')) throw new AppError('INVALID_PARAMETER', 'models: only a channel that takes video or expand lists models (audio and music have one model each, unpriced)');
    return checkExpandModels(protocol, models);
  }
  const catalog = videoCatalogOf(protocol);
  const seen = new Set<string>();
  models.forEach((m, i) => {
    if (!catalog.some((s) => s.id === m.vendor_model)) {
      throw new AppError('INVALID_PARAMETER', `models[${i}].vendor_model must be one of the ${protocol} models: ${catalog.map((s) => s.id).join(', ')} (not ${m.vendor_model})`);
    }
    if (seen.has(m.name)) throw new AppError('INVALID_PARAMETER', `models[${i}].name: ${m.name} is listed twice`);
    seen.add(m.name);
    for (const [key, value] of Object.entries(m.price?.per_second ?? {})) {
      if (!RESOLUTION_KEYS.has(key) || typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new AppError('INVALID_PARAMETER', `models[${i}].price.per_second must map 540p, 720p, 1080p, 4k or * to a number from 0 (not ${JSON.stringify(key)}: ${JSON.stringify(value)})`);
      }
    }
  });
}

/** An expand channel lists its vendor's one model, to name and price it (per image). */
function checkExpandModels(protocol: string, models: readonly ChannelModel[]): void {
  const id = expandModelOf(protocol);
  if (models.length > 1) throw new AppError('INVALID_PARAMETER', `models: a ${protocol} expand channel serves one model (${id}); list it once`);
  const [m] = models;
  if (m.vendor_model !== id) throw new AppError('INVALID_PARAMETER', `models[0].vendor_model must be ${id}, the ${protocol} expand model (not ${m.vendor_model})`);
  if (m.price?.per_second !== undefined) throw new AppError('INVALID_PARAMETER', 'models[0].price: an expand model is priced per_image, not per_second');
  const perImage = m.price?.per_image;
  if (perImage !== undefined && (typeof perImage !== 'number' || !Number.isFinite(perImage) || perImage < 0)) throw new AppError('INVALID_PARAMETER', `models[0].price.per_image must be a number from 0 (not ${JSON.stringify(perImage)})`);
}
