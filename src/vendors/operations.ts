import type { ChannelOperation, VendorProbe } from './contracts/vendor.js';
import { EXPAND_VENDORS, expandModelOf, GATEWAY_EXPAND_PROTOCOL } from './expand-vendors.js';
import { GATEWAY_IMAGE_PROTOCOL, imageCatalogOf } from './image-vendors.js';
import { KLING } from './kling/kling.vendor.js';
import { LUMA } from './luma/luma.vendor.js';
import { GATEWAY_LYRICS_PROTOCOL, lyricsCatalogOf } from './lyrics-vendors.js';
import { GATEWAY_MUSIC_PROTOCOL, musicCatalogOf } from './music-vendors.js';
import { GATEWAY_SPEECH_PROTOCOL, ownVoicesOf, speechCatalogOf } from './speech-vendors.js';
import { stemsCatalogOf } from './stems-vendors.js';
import { AGGREGATOR_PROBE } from './suno-aggregator/suno-aggregator.vendor.js';
import { GATEWAY_VIDEO_PROTOCOL, videoCatalogOf } from './video-vendors.js';
import { GATEWAY_AUDIO_PROTOCOL } from './audio-vendors.js';

/** How a channel prices the models of an operation (`channels.models[].price`): the one key its entries take. */
export type PriceUnit = 'per_second' | 'per_image' | 'per_1k_chars' | 'per_song';

/**
 * One operation as the vendor layer sees it: what channels, the channel models' check, the gateway vendor and the
 * docs need to know of it, with no module imported (the layers: vendors never import modules; the operation's
 * kind, door and settings are in its module, `src/modules/task-kinds.ts` lists those).
 */
export interface OperationVendors {
  readonly name: ChannelOperation;
  /**
   * What a `gateway` channel (another service speaking this interface) is for this operation: the protocol whose
   * adapter it goes through (our door's vendor), its base URL in words, the operations one such channel takes
   * together (one base URL), and the cheap real call that tests it. Null: a gateway channel takes none of it
   * (stems: the clip split is stored here, and another gateway holds none of our clips).
   */
  readonly gateway: { readonly speaks: string; readonly base: string; readonly group: readonly ChannelOperation[]; readonly probe: VendorProbe } | null;
  /** The vendors' models a channel of a protocol may list (by the vendor's ids); none: it lists none, or (`single`) its one model. */
  catalogOf(protocol: string): readonly { readonly id: string }[];
  /** Whether a channel lists exactly its vendor's one model, to name and price it (expand). */
  readonly single?: boolean;
  /**
   * Where its models speak in voices a channel maps (`models[].voices`: callers' names to the vendor's ids): the
   * ids a catalog model speaks where it takes no other on a channel of that protocol, null where it takes any.
   */
  readonly voices?: (spec: never, protocol: string) => readonly string[] | null;
  /** How a listed model is priced (null: its models are not priced per channel). */
  readonly priceUnit: PriceUnit | null;
}

const NONE: readonly { id: string }[] = [];

/**
 * The registry: every operation that goes through channels, one entry each (its name is in CHANNEL_OPERATIONS,
 * src/vendors/contracts/vendor.ts, which this record must cover). The gateway vendor's operations, groups, base
 * URL rule and probe, the channel models' check and price units, and `served` models read it.
 */
export const OPERATION_VENDORS: { readonly [O in ChannelOperation]: OperationVendors & { readonly name: O } } = {
  expand: {
    name: 'expand',
    gateway: { speaks: GATEWAY_EXPAND_PROTOCOL, base: '…/video-a', group: ['expand'], probe: KLING.probe(['expand']) },
    catalogOf: (protocol) => (protocol === 'gateway' || EXPAND_VENDORS.some((v) => v.protocol === protocol) ? [{ id: expandModelOf(protocol) }] : NONE),
    single: true,
    priceUnit: 'per_image',
  },
  video: {
    name: 'video',
    gateway: { speaks: GATEWAY_VIDEO_PROTOCOL, base: '…/video-b/v1', group: ['video'], probe: LUMA.probe(['video']) },
    catalogOf: videoCatalogOf,
    priceUnit: 'per_second',
  },
  audio: {
    name: 'audio',
    gateway: { speaks: GATEWAY_AUDIO_PROTOCOL, base: '…/music-a', group: ['audio', 'music', 'lyrics'], probe: AGGREGATOR_PROBE },
    catalogOf: () => NONE,
    priceUnit: null,
  },
  music: {
    name: 'music',
    gateway: { speaks: GATEWAY_MUSIC_PROTOCOL, base: '…/music-a', group: ['audio', 'music', 'lyrics'], probe: AGGREGATOR_PROBE },
    catalogOf: musicCatalogOf,
    priceUnit: 'per_song',
  },
  image: {
    name: 'image',
    gateway: { speaks: GATEWAY_IMAGE_PROTOCOL, base: '…/openai/v1', group: ['image', 'speech'], probe: { path: '/models', notFoundPasses: false } },
    catalogOf: imageCatalogOf,
    priceUnit: 'per_image',
  },
  speech: { name: 'speech', gateway: { speaks: GATEWAY_SPEECH_PROTOCOL, base: '…/openai/v1', group: ['image', 'speech'], probe: { path: '/models', notFoundPasses: false } }, catalogOf: speechCatalogOf, voices: ownVoicesOf, priceUnit: 'per_1k_chars' },
  // a channel's lyrics models are named, not priced: a task is charged PRICE_LYRICS whatever makes it
  lyrics: { name: 'lyrics', gateway: { speaks: GATEWAY_LYRICS_PROTOCOL, base: '…/music-a', group: ['audio', 'music', 'lyrics'], probe: AGGREGATOR_PROBE }, catalogOf: lyricsCatalogOf, priceUnit: null },
  // a split of one clip, priced per task as a song is (per_song)
  stems: { name: 'stems', gateway: null, catalogOf: stemsCatalogOf, priceUnit: 'per_song' },
};

/** The registry's entries, in CHANNEL_OPERATIONS' order. */
export function operationVendors(): OperationVendors[] {
  return Object.values(OPERATION_VENDORS);
}

/** The models a channel of `protocol` may list for `operation`, by the vendor's ids (a gateway's: the door vendor's). */
export function catalogOf(operation: string, protocol: string): readonly { readonly id: string }[] {
  const op = (OPERATION_VENDORS as Record<string, OperationVendors>)[operation];
  return op ? op.catalogOf(protocol) : NONE;
}
