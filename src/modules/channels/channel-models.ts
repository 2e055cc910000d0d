import { AppError } from '../../common/errors/app-error.js';
import { expandModelOf } from '../../vendors/expand-vendors.js';
import { imageCatalogOf } from '../../vendors/image-vendors.js';
import { videoCatalogOf } from '../../vendors/video-vendors.js';
import type { ImageModelSpec, ImageRequest } from '../../vendors/contracts/image-request.js';
import { FRAME_FITS, type VideoModelSpec } from '../../vendors/contracts/video-request.js';
import { BILLED_UNITS, type BilledUnit } from '../../vendors/contracts/vendor-billing.js';
import { RESOLUTION_SIDES } from '../../vendors/contracts/resolution.js';
import { declaredImageSpec, declaredVideoSpec, storedImageSpec, storedVideoSpec } from './declared-specs.js';

/** A JSON value, as `channels.models` stores it. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** A model a channel serves, as stored (`channels.models`). */
export type ChannelModel = {
  name: string;
  vendor_model: string;
  /**
   * Its price to the company: video per second (by resolution or `*`); expand and images per image, images
   * also `per_image_by` size, quality or `<size>@<quality>` (the most specific wins, then `per_image`). A
   * video model may also price one unit of what its vendor reports it billed (`per_billed_unit`: units,
   * credits, tokens, seconds), to set that figure beside ours.
   */
  price?: { per_second?: Record<string, number>; per_image?: number; per_image_by?: Record<string, number>; per_billed_unit?: Partial<Record<BilledUnit, number>> };
  /**
   * A model the catalog does not know, declared: what it can do, in its operation's terms (declared-specs.ts:
   * a video or image spec, in the admin API's snake_case). Absent for a catalog model, which keeps its spec.
   */
  spec?: { [key: string]: Json };
  /** The operation a declared model serves, on a channel that takes both video and image (else the one it takes). */
  operation?: 'video' | 'image';
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
  /** A model the channel declared (its spec is the operator's, not the catalog's). */
  declared?: true;
}

/** The video models a channel serves: those it lists, or (listing none of them) its vendor's whole catalog under the vendor's ids. */
export function servedVideoModels(channel: { protocol: string; models: unknown; operations?: readonly string[]; frameFit?: string | null }): ServedModel[] {
  const models = served(channel, videoCatalogOf(channel.protocol), 'video', storedVideoSpec);
  // the channel's way of fitting a first frame goes with each model it serves (what `unmetFields` reads)
  const frameFit = FRAME_FITS.find((f) => f === channel.frameFit);
  return frameFit ? models.map((m) => ({ ...m, spec: { ...m.spec, frameFit } })) : models;
}

/** An image model a channel serves: the callers' name and what the vendor's model can do. */
export interface ServedImageModel {
  name: string;
  spec: ImageModelSpec;
  price?: ChannelModel['price'];
  declared?: true;
}

/** The image models a channel serves: those it lists, or (listing none of them) its vendor's whole catalog. */
export function servedImageModels(channel: { protocol: string; models: unknown; operations?: readonly string[] }): ServedImageModel[] {
  return served(channel, imageCatalogOf(channel.protocol), 'image', storedImageSpec);
}

/**
 * The models a channel serves for an operation: those it lists (catalog models by their vendor's id, and the
 * models it declares for this operation with their spec), or, when it lists none of them, its vendor's whole
 * catalog under the vendor's ids.
 */
function served<S extends { id: string }>(
  channel: { models: unknown; operations?: readonly string[] },
  catalog: readonly S[],
  operation: 'video' | 'image',
  declared: (id: string, spec: unknown) => S | undefined,
): { name: string; spec: S; price?: ChannelModel['price']; declared?: true }[] {
  const models: { name: string; spec: S; price?: ChannelModel['price']; declared?: true }[] = [];
  for (const m of Array.isArray(channel.models) ? (channel.models as ChannelModel[]) : []) {
    const price = m.price ? { price: m.price } : {};
    const known = catalog.find((s) => s.id === m.vendor_model);
    if (known && m.spec === undefined) models.push({ name: m.name, spec: known, ...price });
    else if (!known && m.spec !== undefined && (m.operation ?? declaredFor(channel.operations)) === operation) {
      const spec = declared(m.vendor_model, m.spec);
      if (spec) models.push({ name: m.name, spec, ...price, declared: true });
    }
  }
  return models.length > 0 ? models : catalog.map((spec) => ({ name: spec.id, spec }));
}

/** The operation a declared model stored without one serves: the one of video and image its channel takes (checkModels stores it). */
function declaredFor(operations: readonly string[] | undefined): 'video' | 'image' | undefined {
  const taken = (['video', 'image'] as const).filter((op) => operations?.includes(op));
  return taken.length === 1 ? taken[0] : undefined;
}

/** What `n` images cost on a model: its most specific per-image price for the asked size and quality, times n; null when unpriced. */
export function imageCostOf(model: { price?: ChannelModel['price'] }, request: Pick<ImageRequest, 'n' | 'size' | 'quality'>): number | null {
  const by = model.price?.per_image_by ?? {};
  const keys = [request.size && request.quality ? `${request.size}@${request.quality}` : undefined, request.size, request.quality, '*'];
  const price = keys.map((k) => (k === undefined ? undefined : by[k])).find((p) => p !== undefined) ?? model.price?.per_image;
  return price === undefined ? null : Math.round(price * request.n * 1e6) / 1e6;
}

/** What a video model's per-second price is keyed by: a resolution class, or `*`. */
const RESOLUTION_KEYS = new Set(['*', ...Object.keys(RESOLUTION_SIDES)]);

/**
 * Refuses a list of models the channel's vendor does not offer for the channel's operations (unless declared
 * with a spec), a spec for a catalog model, a name given twice, or a malformed price: video models are priced
 * per second, image and expand models per image. Returns the list as it is stored: each declared model with
 * the operation it serves.
 */
export function checkModels(protocol: string, operations: readonly string[], models: readonly ChannelModel[]): ChannelModel[] {
  if (models.length === 0) return [];
  const videos = operations.includes('video') ? videoCatalogOf(protocol) : [];
  const images = operations.includes('image') ? imageCatalogOf(protocol) : [];
  // an operation the protocol has an adapter for (its catalog is not empty) may serve declared models
  const declarable = [...(videos.length > 0 ? ['video' as const] : []), ...(images.length > 0 ? ['image' as const] : [])];
  if (declarable.length === 0) {
    if (!operations.includes('expand')) throw new AppError('INVALID_PARAMETER', 'models: only a channel that takes video, image or expand lists models (audio and music have one model each, unpriced)');
    checkExpandModels(protocol, models);
    return [...models];
  }
  const seen = new Set<string>();
  return models.map((m, i) => {
    const video = videos.some((s) => s.id === m.vendor_model);
    const known = video || images.some((s) => s.id === m.vendor_model);
    if (seen.has(m.name)) throw new AppError('INVALID_PARAMETER', `models[${i}].name: ${m.name} is listed twice`);
    seen.add(m.name);
    if (known) {
      if (m.spec !== undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].spec: ${m.vendor_model} is a ${protocol} model the gateway knows, which keeps its catalog's spec (GET /models shows it); leave spec out, or declare a vendor_model the catalog does not list`);
      if (m.operation !== undefined && m.operation !== (video ? 'video' : 'image')) throw new AppError('INVALID_PARAMETER', `models[${i}].operation: ${m.vendor_model} is a ${video ? 'video' : 'image'} model (not ${m.operation})`);
      checkPrice(m, i, video ? 'video' : 'image');
      return m;
    }
    if (m.spec === undefined) {
      const ids = [...videos, ...images].map((s) => s.id);
      throw new AppError('INVALID_PARAMETER', `models[${i}].vendor_model must be one of the ${protocol} models: ${ids.join(', ')} (not ${m.vendor_model}), or come with a spec declaring what it can do (models[${i}].spec; docs/operators/channels.md, "Declared models")`);
    }
    const operation = m.operation ?? (declarable.length === 1 ? declarable[0] : undefined);
    if (operation === undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].operation is required for a declared model on a channel that takes both video and image: video or image`);
    if (!declarable.includes(operation)) throw new AppError('INVALID_PARAMETER', `models[${i}].operation must be ${declarable.join(' or ')}, an operation the channel takes that has ${protocol} models (not ${operation})`);
    const field = `models[${i}].spec`;
    if (operation === 'video') declaredVideoSpec(m.vendor_model, m.spec, field, protocol, videos);
    else declaredImageSpec(m.vendor_model, m.spec, field, protocol, images);
    checkPrice(m, i, operation);
    return { ...m, operation };
  });
}

function checkPrice(m: ChannelModel, i: number, operation: 'video' | 'image'): void {
  if (operation === 'video') return checkPerSecond(m, i);
  if (m.price?.per_second !== undefined || m.price?.per_billed_unit !== undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].price: an image model is priced per_image (and per_image_by), not per_second or per_billed_unit`);
  checkPerImage(m.price?.per_image, `models[${i}].price.per_image`);
  for (const [key, value] of Object.entries(m.price?.per_image_by ?? {})) {
    if (!/^(\*|low|medium|high|\d{2,5}x\d{2,5}(@(low|medium|high))?)$/.test(key)) throw new AppError('INVALID_PARAMETER', `models[${i}].price.per_image_by keys are a size (1024x1024), a quality (low, medium, high), <size>@<quality> or * (not ${JSON.stringify(key)})`);
    checkPerImage(value, `models[${i}].price.per_image_by.${key}`);
  }
}

function checkPerSecond(m: ChannelModel, i: number): void {
  if (m.price?.per_image !== undefined || m.price?.per_image_by !== undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].price: a video model is priced per_second, not per_image`);
  for (const [key, value] of Object.entries(m.price?.per_second ?? {})) {
    if (!RESOLUTION_KEYS.has(key) || typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new AppError('INVALID_PARAMETER', `models[${i}].price.per_second must map ${[...RESOLUTION_KEYS].slice(1).join(', ')} or * to a number from 0 (not ${JSON.stringify(key)}: ${JSON.stringify(value)})`);
    }
  }
  for (const [key, value] of Object.entries(m.price?.per_billed_unit ?? {})) {
    if (!(BILLED_UNITS as readonly string[]).includes(key) || typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new AppError('INVALID_PARAMETER', `models[${i}].price.per_billed_unit must map ${BILLED_UNITS.join(', ')} to a number from 0 (not ${JSON.stringify(key)}: ${JSON.stringify(value)})`);
    }
  }
}

function checkPerImage(value: unknown, field: string): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0)) throw new AppError('INVALID_PARAMETER', `${field} must be a number from 0 (not ${JSON.stringify(value)})`);
}

/** An expand channel lists its vendor's one model, to name and price it (per image). */
function checkExpandModels(protocol: string, models: readonly ChannelModel[]): void {
  const id = expandModelOf(protocol);
  if (models.length > 1) throw new AppError('INVALID_PARAMETER', `models: a ${protocol} expand channel serves one model (${id}); list it once`);
  const [m] = models;
  if (m.spec !== undefined || m.operation !== undefined) throw new AppError('INVALID_PARAMETER', `models[0]: an expand channel serves its vendor's one model (${id}), which declares no spec or operation`);
  if (m.vendor_model !== id) throw new AppError('INVALID_PARAMETER', `models[0].vendor_model must be ${id}, the ${protocol} expand model (not ${m.vendor_model})`);
  if (m.price?.per_second !== undefined || m.price?.per_billed_unit !== undefined) throw new AppError('INVALID_PARAMETER', 'models[0].price: an expand model is priced per_image, not per_second or per_billed_unit');
  checkPerImage(m.price?.per_image, 'models[0].price.per_image');
}
