import { AppError } from '../../common/errors/app-error.js';
import type { MusicField } from '../../vendors/contracts/music-vendor.js';
import { ELEVENLABS_MUSIC_LIMITS, type ElevenLabsComposeMusicDto, type ElevenLabsCompositionPlanDto } from './dto/elevenlabs-music.dto.js';

/** What a compose request asks, in the music task's words (MusicParams' fields a door fills). */
export interface ComposedSong {
  lyrics: string | null;
  description: string | null;
  style: string | null;
  avoid_style: string | null;
  instrumental: boolean;
  duration_s: number | null;
}

/** This door's names of the normalized fields, for the models' check (a prompt's request). */
export const PROMPT_FIELDS: Record<MusicField, string> = {
  model: 'model_id',
  lyrics: 'prompt',
  description: 'prompt',
  style: 'prompt',
  avoidStyle: 'prompt',
  instrumental: 'force_instrumental',
  durationS: 'music_length_ms',
  continues: 'prompt',
};

/** A composition plan's (its lines are the lyrics, its sections' durations the length, a plan without lines an instrumental). */
export const PLAN_FIELDS: Record<MusicField, string> = {
  model: 'model_id',
  lyrics: 'composition_plan.sections',
  description: 'composition_plan',
  style: 'composition_plan.positive_global_styles',
  avoidStyle: 'composition_plan.negative_global_styles',
  instrumental: 'composition_plan.sections',
  durationS: 'composition_plan.sections',
  continues: 'composition_plan',
};

/**
 * Refuses what ElevenLabs refuses beyond each field's own rules: neither or both of `prompt` and
 * `composition_plan`; `music_length_ms` or `force_instrumental` with a plan (a prompt's only); a plan
 * without sections, or whose sections last less than 3 s or more than 10 minutes in all.
 */
export function assertComposable(dto: ElevenLabsComposeMusicDto): void {
  const { lengthMs } = ELEVENLABS_MUSIC_LIMITS;
  if (dto.prompt === undefined && dto.composition_plan === undefined) {
    throw AppError.invalidParameter('prompt or composition_plan is required: what the song is, in words or section by section', { param: 'prompt', rule: 'missing' });
  }
  if (dto.prompt !== undefined && dto.composition_plan !== undefined) {
    throw AppError.invalidParameter('composition_plan cannot be sent with prompt: send one of them', { param: 'composition_plan', rule: 'value' });
  }
  const plan = dto.composition_plan;
  if (!plan) return;
  for (const field of ['music_length_ms', 'force_instrumental'] as const) {
    if (dto[field] !== undefined) {
      throw AppError.invalidParameter(`${field} is used only with prompt: a composition plan's length is its sections' durations, and a plan without lines is instrumental`, { param: field, rule: 'value' });
    }
  }
  if (plan.sections.length === 0) throw AppError.invalidParameter('composition_plan.sections must hold at least one section', { param: 'composition_plan.sections', rule: 'empty' });
  const totalMs = planLengthMs(plan);
  if (totalMs < lengthMs.min || totalMs > lengthMs.max) {
    throw AppError.invalidParameter(`composition_plan.sections must last ${lengthMs.min} to ${lengthMs.max} ms in all (their duration_ms add up to ${totalMs})`, {
      param: 'composition_plan.sections',
      rule: totalMs < lengthMs.min ? 'below_min' : 'above_max',
      integer: true,
    });
  }
}

/** The song a checked compose request asks for, in the music task's words. */
export function composedSong(dto: ElevenLabsComposeMusicDto): ComposedSong {
  const plan = dto.composition_plan;
  if (!plan) {
    return {
      lyrics: null,
      description: dto.prompt ?? null,
      style: null,
      avoid_style: null,
      instrumental: dto.force_instrumental ?? false,
      duration_s: dto.music_length_ms !== undefined ? dto.music_length_ms / 1000 : null,
    };
  }
  return {
    lyrics: planLyrics(plan),
    description: null,
    style: joined(plan.positive_global_styles),
    avoid_style: joined(plan.negative_global_styles),
    // a plan that sings nothing is an instrumental (ElevenLabs plays sections without lines)
    instrumental: plan.sections.every((s) => s.lines.every((line) => line.trim() === '')),
    duration_s: planLengthMs(plan) / 1000,
  };
}

/**
 * A plan's sections as Suno-style tagged lyrics, what every music vendor here reads: `[Section name]`, or
 * `[Section name: its styles, no what it avoids]`, then its lines; sections apart by a blank line.
 */
export function planLyrics(plan: ElevenLabsCompositionPlanDto): string {
  return plan.sections
    .map((section) => {
      const styles = [...section.positive_local_styles.map((s) => s.trim()), ...section.negative_local_styles.map((s) => `no ${s.trim()}`)].filter((s) => s !== '' && s !== 'no ');
      const tag = `[${section.section_name.trim()}${styles.length > 0 ? `: ${styles.join(', ')}` : ''}]`;
      return [tag, ...section.lines.map((line) => line.trim()).filter((line) => line !== '')].join('\n');
    })
    .join('\n\n');
}

export function planLengthMs(plan: ElevenLabsCompositionPlanDto): number {
  return plan.sections.reduce((sum, s) => sum + s.duration_ms, 0);
}

function joined(styles: string[]): string | null {
  const kept = styles.map((s) => s.trim()).filter((s) => s !== '');
  return kept.length > 0 ? kept.join(', ') : null;
}
