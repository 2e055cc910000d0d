import type { TaskSummaryDto } from '../api/types.gen';

/** Every operation, with its name in the console. `satisfies` makes a new operation in the API a build error here until it is named. */
export const OPERATIONS = {
  expand: 'Image expand',
  video: 'Video generation',
  audio: 'Audio upload',
  music: 'Music',
  concat: 'Music concat',
  image: 'Image generation',
  speech: 'Speech',
  lyrics: 'Lyrics',
  stems: 'Music stems',
  wav: 'WAV conversion',
} satisfies Record<TaskSummaryDto['kind'], string>;

export type Operation = keyof typeof OPERATIONS;

/**
 * The doors a task may come through (the APIs the gateway answers in), with their names in the console; a door
 * not listed here is shown by its own name. The task list's door filter offers these.
 */
export const DOORS: Record<string, string> = {
  luma: 'Luma',
  kling: 'Kling',
  openai: 'OpenAI',
  suno: 'Suno-style',
  sunoapi: 'sunoapi.org-style',
  elevenlabs: 'ElevenLabs',
};

export function doorName(door: string): string {
  return DOORS[door] ?? door;
}

export const STATES = ['queued', 'running', 'succeeded', 'failed'] as const satisfies readonly TaskSummaryDto['state'][];

export function operationName(kind: string): string {
  return (OPERATIONS as Record<string, string>)[kind] ?? kind;
}

/** A time in the reader's locale, to the second. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A limit as shown: null is unlimited. */
export function formatLimit(value: number | null | undefined): string {
  return value === null || value === undefined ? 'unlimited' : value.toLocaleString();
}

export function isFinal(state: string): boolean {
  return state === 'succeeded' || state === 'failed';
}

/** What a vendor reported it billed, by unit ("108,900 tokens, 3.1 units"); a dash when it reported nothing. */
export function formatBilled(billed: Partial<Record<string, number>>): string {
  const parts = Object.entries(billed).filter((e): e is [string, number] => e[1] !== undefined).map(([unit, amount]) => `${amount.toLocaleString()} ${unit}`);
  return parts.length > 0 ? parts.join(', ') : '—';
}
