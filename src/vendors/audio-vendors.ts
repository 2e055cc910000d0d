import type { AudioVendor } from './contracts/audio-vendor.js';
import { SunoAudioVendor } from './suno-aggregator/suno-audio.vendor.js';

/**
 * The registry of audio-upload vendors: one adapter per channel protocol. A gateway speaking this interface's
 * audio door is a Suno-style aggregator's protocol (the door is that interface).
 */
export const AUDIO_VENDORS = [SunoAudioVendor] as const satisfies readonly { new (...args: never[]): AudioVendor; readonly protocol: string }[];

/** The protocol whose adapter a gateway channel's uploads go through. */
export const GATEWAY_AUDIO_PROTOCOL = SunoAudioVendor.protocol;
