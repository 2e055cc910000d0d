import type { StepOutcome } from '../../../common/tasks/task-runner.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { AudioUploadRow } from '../audio.repository.js';

/** What the clip turned out to be. */
export interface AudioFacts {
  format: string;
  duration: number;
  sizeBytes: number;
  sha256: string;
  /** The clip itself, to keep in the media store (a provider that fetched it); its Content-Type. */
  clip?: { bytes: Buffer; contentType: string };
}

export type AudioContext = SubmitMarks;

export interface AudioProvider {
  step(upload: AudioUploadRow, ctx: AudioContext): Promise<StepOutcome<AudioFacts>>;
}

export const AUDIO_PROVIDERS = Symbol('AUDIO_PROVIDERS');
