import type { LyricsModelSpec, LyricsVendor } from './contracts/lyrics-vendor.js';
import { MinimaxLyricsVendor } from './minimax/minimax-lyrics.vendor.js';
import { MurekaLyricsVendor } from './mureka/mureka-lyrics.vendor.js';
import { SunoLyricsVendor } from './suno-aggregator/suno-lyrics.vendor.js';
import { SunoapiLyricsVendor } from './sunoapi/sunoapi-lyrics.vendor.js';

/**
 * The registry of lyrics vendors: one adapter class per channel protocol (each `static readonly protocol` and
 * `models`), one line each. A gateway channel speaks this interface's Suno-style door (`/music-a/submit/lyrics`),
 * a Suno-style aggregator's protocol (GATEWAY_LYRICS_PROTOCOL).
 */
export const LYRICS_VENDORS = [
  SunoLyricsVendor,
  SunoapiLyricsVendor,
  MinimaxLyricsVendor,
  MurekaLyricsVendor,
] as const satisfies readonly { new (...args: never[]): LyricsVendor; readonly protocol: string; readonly models: readonly LyricsModelSpec[] }[];

export type LyricsVendorClass = (typeof LYRICS_VENDORS)[number];

/** The protocol whose adapter a gateway channel's lyrics go through (it speaks the Suno-style door). */
export const GATEWAY_LYRICS_PROTOCOL = SunoLyricsVendor.protocol;

/** The lyrics models a channel of a protocol may list, by the vendor's ids (a gateway's: those of the protocol it speaks; none for a protocol without lyrics). */
export function lyricsCatalogOf(protocol: string): readonly LyricsModelSpec[] {
  const speaks = protocol === 'gateway' ? GATEWAY_LYRICS_PROTOCOL : protocol;
  return LYRICS_VENDORS.find((v) => v.protocol === speaks)?.models ?? [];
}
