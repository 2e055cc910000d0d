import type { MusicModelSpec, MusicVendor } from './contracts/music-vendor.js';
import { ElevenLabsMusicVendor } from './elevenlabs/elevenlabs-music.vendor.js';
import { LyriaMusicVendor } from './google/lyria-music.vendor.js';
import { MinimaxMusicVendor } from './minimax/minimax-music.vendor.js';
import { MurekaMusicVendor } from './mureka/mureka-music.vendor.js';
import { StabilityMusicVendor } from './stability/stability-music.vendor.js';
import { SunoMusicVendor } from './suno-aggregator/suno-music.vendor.js';
import { SunoapiMusicVendor } from './sunoapi/sunoapi-music.vendor.js';

/**
 * The registry of music vendors: one adapter per channel protocol. A gateway speaking this interface's
 * music door is a Suno-style aggregator's protocol (the door is that interface).
 */
export const MUSIC_VENDORS = [
  SunoMusicVendor,
  SunoapiMusicVendor,
  MurekaMusicVendor,
  ElevenLabsMusicVendor,
  MinimaxMusicVendor,
  StabilityMusicVendor,
  LyriaMusicVendor,
] as const satisfies readonly { new (...args: never[]): MusicVendor; readonly protocol: string; readonly models: readonly MusicModelSpec[] }[];

/** The protocol whose adapter a gateway channel's music goes through. */
export const GATEWAY_MUSIC_PROTOCOL = SunoMusicVendor.protocol;

/** The music models a channel of a protocol may list (a gateway's: those of the protocol it speaks). */
export function musicCatalogOf(protocol: string): readonly MusicModelSpec[] {
  const speaks = protocol === 'gateway' ? GATEWAY_MUSIC_PROTOCOL : protocol;
  return MUSIC_VENDORS.find((v) => v.protocol === speaks)?.models ?? [];
}
