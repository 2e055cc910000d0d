import type { SpeechModelSpec } from './contracts/speech-vendor.js';
import { ElevenLabsSpeechVendor } from './elevenlabs/elevenlabs-speech.vendor.js';
import { GeminiSpeechVendor } from './google/gemini-speech.vendor.js';
import { OpenAISpeechVendor } from './openai/openai-speech.vendor.js';

/**
 * The registry of speech vendors: one adapter class per channel protocol (each `static readonly protocol` and
 * `models`). A gateway channel speaks this interface's OpenAI speech door (GATEWAY_SPEECH_PROTOCOL).
 */
export const SPEECH_VENDORS = [OpenAISpeechVendor, ElevenLabsSpeechVendor, GeminiSpeechVendor] as const;

export type SpeechVendorClass = (typeof SPEECH_VENDORS)[number];

/** The protocol whose adapter a gateway channel's speech goes through (it speaks the OpenAI speech door). */
export const GATEWAY_SPEECH_PROTOCOL = OpenAISpeechVendor.protocol;

/** The adapter class of a channel protocol for speech; undefined when it has none. */
export function speechVendorOf(protocol: string): SpeechVendorClass | undefined {
  const wanted = protocol === 'gateway' ? GATEWAY_SPEECH_PROTOCOL : protocol;
  return SPEECH_VENDORS.find((v) => v.protocol === wanted);
}

/**
 * The vendor's voice ids a speech model speaks where it takes no other (`voiceIds` false: OpenAI's tts-1 speaks
 * its classic voices only), which a channel's voice names must map to; null where it takes any id, and on a
 * `gateway` channel (another gateway's names are its own).
 */
export function ownVoicesOf(spec: SpeechModelSpec, protocol: string): readonly string[] | null {
  // another gateway's voice names are its own channels' (any name it maps), not OpenAI's list
  return spec.voiceIds || protocol === 'gateway' ? null : [...new Set(Object.values(spec.voices))];
}

/** The models a protocol offers for speech, by the vendor's ids (none for a protocol without speech). */
export function speechCatalogOf(protocol: string): readonly SpeechModelSpec[] {
  return speechVendorOf(protocol)?.models ?? [];
}
