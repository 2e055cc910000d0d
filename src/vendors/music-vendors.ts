import type { MusicVendor } from './contracts/music-vendor.js';
import { LyriaMusicVendor } from './google/lyria-music.vendor.js';
import { SunoMusicVendor } from './suno-aggregator/suno-music.vendor.js';

/**
 * The registry of music vendors: one adapter per channel protocol. A gateway speaking this interface's
 * music door is a Suno-style aggregator's protocol (the door is that interface).
 */
export const MUSIC_VENDORS = [SunoMusicVendor, LyriaMusicVendor] as const satisfies readonly { new (...args: never[]): MusicVendor; readonly protocol: string }[];

/** The protocol whose adapter a gateway channel's music goes through. */
export const GATEWAY_MUSIC_PROTOCOL = SunoMusicVendor.protocol;
