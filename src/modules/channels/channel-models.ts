import { withArticle } from '../../common/words.js';
import { AppError } from '../../common/errors/app-error.js';
import { catalogOf, OPERATION_VENDORS, type OperationVendors, operationVendors } from '../../vendors/operations.js';
import type { ImageModelSpec, ImageRequest } from '../../vendors/contracts/image-request.js';
import { FRAME_FITS, type VideoModelSpec } from '../../vendors/contracts/video-request.js';
import { BILLED_UNITS, type BilledUnit } from '../../vendors/contracts/vendor-billing.js';
import { RESOLUTION_SIDES } from '../../vendors/contracts/resolution.js';
import { type DeclarableOperation, declaredImageSpec, declaredSpeechSpec, declaredVideoSpec, storedImageSpec, storedSpeechSpec, storedVideoSpec } from './declared-specs.js';

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
  price?: { per_second?: Record<string, number>; per_image?: number; per_image_by?: Record<string, number>; per_billed_unit?: Partial<Record<BilledUnit, number>>; per_1k_chars?: number; per_song?: number };
  /** For an operation whose models speak in voices (speech): the voice names callers use, each mapped to the vendor's voice id (added to, or replacing, the model's own). */
  voices?: Record<string, string>;
  /**
   * A model the catalog does not know, declared: what it can do, in its operation's terms (declared-specs.ts:
   * a video or image spec, in the admin API's snake_case). Absent for a catalog model, which keeps its spec.
   */
  spec?: { [key: string]: Json };
  /** The operation a declared model serves, on a channel that takes more than one that may declare models (else the one it takes). */
  operation?: DeclarableOperation;
};

/**
 * The operations whose channels may declare models the catalog does not know, each with its spec's reader: the
 * stored spec read back (`stored`), and the admin API's check naming the field (`check`).
 */
const DECLARABLE: Readonly<Record<DeclarableOperation, { stored(id: string, spec: unknown): { id: string } | undefined; check(id: string, spec: unknown, field: string, protocol: string, catalog: readonly never[]): unknown }>> = {
  video: { stored: storedVideoSpec, check: declaredVideoSpec as never },
  image: { stored: storedImageSpec, check: declaredImageSpec as never },
  speech: { stored: storedSpeechSpec, check: declaredSpeechSpec as never },
};
type Declarable = keyof typeof DECLARABLE;

/** The expand model a channel serves, under the name it lists it by (its vendor's id when it lists none), with its price. */
export function servedExpandModel(channel: { protocol: string; models: unknown }): { name: string; price?: ChannelModel['price'] } {
  const listed = Array.isArray(channel.models) ? (channel.models as ChannelModel[]) : [];
  const id = OPERATION_VENDORS.expand.catalogOf(channel.protocol)[0]?.id ?? 'expand';
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
  const models = servedModels<VideoModelSpec>(channel, 'video');
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
  return servedModels<ImageModelSpec>(channel, 'image');
}

/** A model a channel serves for an operation: the callers' name, the vendor model's spec, its price and the channel's own additions to it. */
export interface ServedOf<S> {
  name: string;
  spec: S;
  price?: ChannelModel['price'];
  /** The channel's voices for it (speech), by callers' name. */
  voices?: Record<string, string>;
  /** A model the channel declared (its spec is the operator's, not the catalog's). */
  declared?: true;
}

/**
 * The models a channel serves for `operation` (its catalog in the operation registry, src/vendors/operations.ts):
 * those it lists, or (listing none of them) its vendor's whole catalog under the vendor's ids. `S` is the
 * operation's model spec (VideoModelSpec, ImageModelSpec, SpeechModelSpec, …).
 */
export function servedModels<S extends { id: string }>(channel: { protocol: string; models: unknown; operations?: readonly string[] }, operation: string): ServedOf<S>[] {
  const catalog = catalogOf(operation, channel.protocol) as readonly S[];
  const declarable = DECLARABLE[operation as Declarable];
  const models: ServedOf<S>[] = [];
  for (const m of Array.isArray(channel.models) ? (channel.models as ChannelModel[]) : []) {
    const extra = { ...(m.price ? { price: m.price } : {}), ...(m.voices ? { voices: m.voices } : {}) };
    const known = catalog.find((s) => s.id === m.vendor_model);
    if (known && m.spec === undefined) models.push({ name: m.name, spec: known, ...extra });
    else if (!known && declarable && m.spec !== undefined && (m.operation ?? declaredFor(channel.operations)) === operation) {
      const spec = declarable.stored(m.vendor_model, m.spec) as S | undefined;
      if (spec) models.push({ name: m.name, spec, ...extra, declared: true });
    }
  }
  return models.length > 0 ? models : catalog.map((spec) => ({ name: spec.id, spec }));
}

/** The operation a declared model stored without one serves: the one of the declarable operations its channel takes (checkModels stores it). */
function declaredFor(operations: readonly string[] | undefined): Declarable | undefined {
  const taken = (Object.keys(DECLARABLE) as Declarable[]).filter((op) => operations?.includes(op));
  return taken.length === 1 ? taken[0] : undefined;
}

/** What `chars` characters cost on a model priced per 1,000 characters (`per_1k_chars`); null when unpriced. */
export function charsCostOf(model: { price?: ChannelModel['price'] }, chars: number): number | null {
  const price = model.price?.per_1k_chars;
  return price === undefined ? null : Math.round((price * chars) / 1000 * 1e6) / 1e6;
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
 * Refuses a list of models the channel's vendor does not offer for the channel's operations (their catalogs in
 * the operation registry) unless declared with a spec (video, image), a spec for a catalog model, a name given
 * twice, or a malformed price: each model is priced in its operation's unit (video per second, image and expand
 * per image, speech per 1,000 characters). An operation whose channels serve their vendor's one model (expand)
 * lists it once, to name and price it. Returns the list as it is stored: each declared model with its operation.
 */
export function checkModels(protocol: string, operations: readonly string[], models: readonly ChannelModel[]): ChannelModel[] {
  if (models.length === 0) return [];
  const ops = operationVendors().filter((o) => operations.includes(o.name) && o.catalogOf(protocol).length > 0);
  const listing = ops.filter((o) => !o.single);
  if (listing.length === 0) {
    const single = ops.find((o) => o.single);
    if (!single) {
      const priced = operationVendors().filter((o) => o.priceUnit).sort((a, b) => Number(a.single ?? false) - Number(b.single ?? false)).map((o) => o.name);
      throw new AppError('INVALID_PARAMETER', `models: only a channel that takes ${priced.slice(0, -1).join(', ')} or ${priced.at(-1)} lists models (the others have one model each, unpriced)`);
    }
    checkSingleModel(protocol, single, models);
    return [...models];
  }
  // an operation the protocol has an adapter for (its catalog is not empty) may serve declared models
  const declarable = listing.map((o) => o.name).filter((name): name is Declarable => name in DECLARABLE);
  const seen = new Set<string>();
  return models.map((listed, i) => {
    // a spec sent null is one left out, as in every body
    const m: ChannelModel = (listed.spec as unknown) === null ? (({ spec: _, ...rest }) => rest)(listed) : listed;
    // a catalog model of any operation the channel takes: a Kling channel of expand and video lists kling-expand too (to price it)
    const op = ops.find((o) => o.catalogOf(protocol).some((s) => s.id === m.vendor_model));
    if (seen.has(m.name)) throw new AppError('INVALID_PARAMETER', `models[${i}].name: ${m.name} is listed twice`);
    seen.add(m.name);
    if (op) {
      if (m.spec !== undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].spec: ${m.vendor_model} is ${withArticle(protocol)} model the gateway knows, which keeps its catalog's spec (GET /models shows it); leave spec out, or declare a vendor_model the catalog does not list`);
      if (m.operation !== undefined && m.operation !== op.name) throw new AppError('INVALID_PARAMETER', `models[${i}].operation: ${m.vendor_model} is ${withArticle(op.name)} model (not ${m.operation})`);
      checkModelExtras(m, i, op, op.catalogOf(protocol).find((s) => s.id === m.vendor_model), protocol);
      return m;
    }
    // vendors' ids are case-sensitive: one that differs from a catalog id only in case is that model mistyped
    const lookalike = listing.flatMap((o) => o.catalogOf(protocol)).find((s) => s.id.toLowerCase() === m.vendor_model.toLowerCase());
    if (lookalike) throw new AppError('INVALID_PARAMETER', `models[${i}].vendor_model: ${m.vendor_model} differs only in case from ${lookalike.id}, ${withArticle(protocol)} model the gateway knows (vendors' ids are case-sensitive): write ${lookalike.id}${m.spec !== undefined ? ', and leave spec out (it keeps its catalog\'s spec)' : ''}`);
    if (m.spec === undefined || declarable.length === 0) {
      const ids = [...new Set(ops.flatMap((o) => o.catalogOf(protocol).map((s) => s.id)))];
      const declare = declarable.length > 0 ? `, or come with a spec declaring what it can do (models[${i}].spec; docs/operators/channels.md, "Declared models")` : '';
      throw new AppError('INVALID_PARAMETER', `models[${i}].vendor_model must be one of the ${protocol} models: ${ids.join(', ')} (not ${m.vendor_model})${declare}`);
    }
    const operation = m.operation ?? (declarable.length === 1 ? declarable[0] : undefined);
    if (operation === undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].operation is required for a declared model on a channel that takes ${declarable.join(' and ')}: ${declarable.join(' or ')}`);
    if (!declarable.includes(operation)) throw new AppError('INVALID_PARAMETER', `models[${i}].operation must be ${declarable.join(' or ')}, an operation the channel takes that has ${protocol} models (not ${operation})`);
    const opOf = listing.find((o) => o.name === operation)!;
    // null in one of its optional fields means the same as leaving it out, as in every body; it is stored without it
    const declared = withoutNullFields(m.spec);
    const spec = DECLARABLE[operation].check(m.vendor_model, declared, `models[${i}].spec`, protocol, opOf.catalogOf(protocol) as readonly never[]);
    checkModelExtras(m, i, opOf, spec, protocol);
    return { ...m, spec: declared, operation };
  });
}

/** An object without its fields whose value is null (a copy); anything else as it is. */
function withoutNullFields<T>(value: T): T {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null)) as T) : value;
}

/** A listed model's voices (speech only) and its price in its operation's unit (`spec`: what the model makes, catalog or declared). */
function checkModelExtras(m: ChannelModel, i: number, op: OperationVendors, spec: unknown, protocol: string): void {
  if (m.voices !== undefined && !op.voices) throw new AppError('INVALID_PARAMETER', `models[${i}].voices: only a speech model has voices (${m.vendor_model} is ${withArticle(op.name)} model)`);
  checkVoices(m.voices, i);
  const own = m.voices !== undefined && spec !== undefined ? op.voices?.(spec as never, protocol) : null;
  for (const [name, id] of Object.entries(own ? m.voices! : {})) {
    if (!own!.includes(id)) throw new AppError('INVALID_PARAMETER', `models[${i}].voices.${name}: ${m.vendor_model} speaks only its own voices (${own!.join(', ')}) and takes no other voice id (not ${JSON.stringify(id)})`);
  }
  if (op.priceUnit === null) {
    if (m.price !== undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].price: ${op.name} models are not priced per channel (${m.vendor_model} is ${withArticle(op.name)} model); leave price out`);
    return;
  }
  PRICE_CHECKS[op.priceUnit](m, i, op.name, spec);
}

/** The price rule of each unit: a model is priced in its operation's unit only. */
const PRICE_CHECKS: Record<NonNullable<OperationVendors['priceUnit']>, (m: ChannelModel, i: number, operation: string, spec: unknown) => void> = {
  per_second: (m, i, _operation, spec) => checkPerSecond(m, i, (spec as { resolutions?: readonly string[] } | undefined)?.resolutions),
  per_image: (m, i, operation) => {
    if (m.price?.per_second !== undefined || m.price?.per_billed_unit !== undefined || m.price?.per_1k_chars !== undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].price: an ${operation} model is priced per_image${operation === 'image' ? ' (and per_image_by)' : ''}, not per_second or per_billed_unit${m.price?.per_1k_chars !== undefined ? ' (nor per_1k_chars)' : ''}`);
    checkPerImage(m.price?.per_image, `models[${i}].price.per_image`);
    for (const [key, value] of Object.entries(m.price?.per_image_by ?? {})) {
      if (!/^(\*|low|medium|high|\d{2,5}x\d{2,5}(@(low|medium|high))?)$/.test(key)) throw new AppError('INVALID_PARAMETER', `models[${i}].price.per_image_by keys are a size (1024x1024), a quality (low, medium, high), <size>@<quality> or * (not ${JSON.stringify(key)})`);
      checkPerImage(value, `models[${i}].price.per_image_by.${key}`);
    }
  },
  per_1k_chars: (m, i, operation) => {
    const { per_1k_chars: _, ...other } = m.price ?? {};
    if (Object.keys(other).length > 0) throw new AppError('INVALID_PARAMETER', `models[${i}].price: ${withArticle(operation)} model is priced per_1k_chars (per 1,000 characters of input), not ${Object.keys(other).join(', ')}`);
    checkPerImage(m.price?.per_1k_chars, `models[${i}].price.per_1k_chars`);
  },
  per_song: (m, i, operation) => {
    const { per_song: _, ...other } = m.price ?? {};
    if (Object.keys(other).length > 0) throw new AppError('INVALID_PARAMETER', `models[${i}].price: ${withArticle(operation)} model is priced per_song (one task's song, all its takes), not ${Object.keys(other).join(', ')}`);
    checkPerImage(m.price?.per_song, `models[${i}].price.per_song`);
  },
};

/** A channel's voices: names callers use (1 to 64 letters, digits and . _ -) mapped to the vendor's voice ids (1 to 128 characters). */
function checkVoices(voices: unknown, i: number): void {
  if (voices === undefined) return;
  if (typeof voices !== 'object' || voices === null || Array.isArray(voices)) throw new AppError('INVALID_PARAMETER', `models[${i}].voices must be an object mapping voice names to the vendor's voice ids, such as {"alloy": "21m00Tcm4TlvDq8ikWAM"}`);
  const entries = Object.entries(voices);
  if (entries.length > 200) throw new AppError('INVALID_PARAMETER', `models[${i}].voices: at most 200 voices (not ${entries.length})`);
  for (const [name, id] of entries) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) throw new AppError('INVALID_PARAMETER', `models[${i}].voices: a voice name must be 1 to 64 letters, digits and . _ - (not ${JSON.stringify(name)})`);
    if (typeof id !== 'string' || id.length < 1 || id.length > 128) throw new AppError('INVALID_PARAMETER', `models[${i}].voices.${name} must be the vendor's voice id, 1 to 128 characters`);
  }
}

/** A video model's price per second, by resolution: keys of the gateway's classes (or *), and of those the model makes (`resolutions`), so that a price never sits on a resolution no task will have while the ones it makes go unpriced. */
function checkPerSecond(m: ChannelModel, i: number, resolutions?: readonly string[]): void {
  if (m.price?.per_image !== undefined || m.price?.per_image_by !== undefined || m.price?.per_1k_chars !== undefined) throw new AppError('INVALID_PARAMETER', `models[${i}].price: a video model is priced per_second, not per_image${m.price?.per_1k_chars !== undefined ? ' or per_1k_chars' : ''}`);
  for (const [key, value] of Object.entries(m.price?.per_second ?? {})) {
    if (!RESOLUTION_KEYS.has(key) || typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new AppError('INVALID_PARAMETER', `models[${i}].price.per_second must map ${[...RESOLUTION_KEYS].slice(1).join(', ')} or * to a number from 0 (not ${JSON.stringify(key)}: ${JSON.stringify(value)})`);
    }
    if (key !== '*' && resolutions && !resolutions.includes(key)) {
      throw new AppError('INVALID_PARAMETER', `models[${i}].price.per_second.${key}: ${m.vendor_model} makes no ${key} video (it makes ${resolutions.join(', ')}); price those, or * for any`);
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

/** A channel of an operation that serves its vendor's one model (expand) lists it once, to name and price it (per image). */
function checkSingleModel(protocol: string, op: OperationVendors, models: readonly ChannelModel[]): void {
  const id = op.catalogOf(protocol)[0].id;
  if (models.length > 1) throw new AppError('INVALID_PARAMETER', `models: ${withArticle(protocol)} ${op.name} channel serves one model (${id}); list it once`);
  const [m] = models;
  if (m.spec !== undefined || m.operation !== undefined) throw new AppError('INVALID_PARAMETER', `models[0]: an ${op.name} channel serves its vendor's one model (${id}), which declares no spec or operation`);
  if (m.vendor_model !== id) throw new AppError('INVALID_PARAMETER', `models[0].vendor_model must be ${id}, the ${protocol} ${op.name} model (not ${m.vendor_model})`);
  if (m.voices !== undefined) throw new AppError('INVALID_PARAMETER', `models[0].voices: only a speech model has voices (${id} is ${withArticle(op.name)} model)`);
  if (m.price?.per_second !== undefined || m.price?.per_billed_unit !== undefined || m.price?.per_1k_chars !== undefined) throw new AppError('INVALID_PARAMETER', `models[0].price: an ${op.name} model is priced per_image, not per_second or per_billed_unit${m.price?.per_1k_chars !== undefined ? ' (nor per_1k_chars)' : ''}`);
  checkPerImage(m.price?.per_image, 'models[0].price.per_image');
}
