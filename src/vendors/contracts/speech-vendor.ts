import type { RelayVendor } from './relay.js';
import type { VendorAccount } from './vendor.js';

/** The formats a caller may ask speech in (OpenAI's `response_format`); `pcm` is raw 16-bit little-endian mono at 24 kHz, as OpenAI's. */
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

/** The longest input any door takes (OpenAI's `input`: 4,096 characters); a model may take less. */
export const SPEECH_MAX_INPUT = 4096;

/**
 * Speech as the gateway asks for it, in its own words: what the speech operation stores as a task's params and
 * what an adapter maps out to its vendor. A door maps its body into it.
 */
export interface SpeechRequest {
  /** The model callers named (a catalog id, or a name a channel serves); null: any model that makes the rest. */
  model: string | null;
  /** The text to speak. */
  input: string;
  /** A voice: one of the gateway's voice names (OpenAI's: `alloy`, `coral`, …), mapped per model to the vendor's id, or a vendor's own voice id. */
  voice: { name: string } | { id: string };
  /** How to speak it (OpenAI's `instructions`); null: not asked. */
  instructions: string | null;
  /** The format the caller gets (the gateway converts what the vendor answers into it). */
  format: SpeechFormat;
  /** 0.25–4; 1 when not asked. */
  speed: number;
}

/** What one vendor speech model can do. A field it lacks is refused at the door (never dropped). */
export interface SpeechModelSpec {
  /** The vendor's id of the model. */
  id: string;
  /** The gateway's voice names it speaks, each mapped to the vendor's voice id. */
  voices: Readonly<Record<string, string>>;
  /** Whether it takes a vendor voice id not in `voices` (`voice: {id}`). */
  voiceIds: boolean;
  /** The longest input it takes, in characters. */
  maxInput: number;
  /** Whether it takes `instructions`. */
  instructions: boolean;
  /** The speeds it takes (null: only 1). */
  speed: { min: number; max: number } | null;
}

/** Audio a vendor answered with: its bytes and what they are (`pcm`: raw 16-bit little-endian mono at `sampleRate`). */
export interface SpeechAudio {
  bytes: Buffer;
  format: SpeechFormat;
  /** The sample rate of `pcm` (and, where known, of the rest). */
  sampleRate?: number;
}

/** A create, mapped out of the normalized request by the adapter: the model, the request and the vendor's voice id it speaks in. */
export interface SpeechCreate {
  model: SpeechModelSpec;
  request: SpeechRequest;
  /** The vendor's voice id (the channel's mapping of the voice name, or the id asked). */
  voiceId: string;
}

/**
 * One speech vendor's protocol: its models, and how text becomes audio. Synchronous: `create` answers the
 * audio (in one of the formats the vendor makes, the closest it can to the one asked; the operation converts
 * it). Errors are thrown as the UpstreamClient throws them (busy; refused: auth, account, request — a content
 * refusal as a refused request whose words say so; unavailable), an answer without audio as UnusableAnswer.
 * A new vendor is one such class in its folder and a line in `speech-vendors.ts`.
 */
export interface SpeechVendor extends RelayVendor<never> {
  readonly models: readonly SpeechModelSpec[];
  create(account: VendorAccount, create: SpeechCreate): Promise<SpeechAudio>;
}
