import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString } from 'class-validator';
import { CLIP_TYPES } from '../../../modules/clips/clip-media.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const MUSIC_ACTIONS = ['MUSIC', 'CONCAT', 'UPLOAD', 'STEMS'] as const;
export const MUSIC_TASK_STATUSES = ['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE'] as const;
export const CLIP_STATUSES = ['submitted', 'queued', 'streaming', 'complete', 'error'] as const;

/** One step of a clip's chain: a clip and the second it was cut at (null: kept whole). */
export class ClipHistoryEntryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: CLIP_TYPES, example: 'upload' })
  type!: string;

  @ApiProperty({ type: Number, nullable: true, description: 'Seconds of this clip kept before the next part (null: kept whole).', example: 5 })
  continue_at!: number | null;
}

export class ClipMetadataDto {
  @ApiProperty({ type: String, nullable: true, description: 'Style tags.', example: 'lo-fi, piano' })
  tags!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The lyrics it sings as its vendor reported them (description mode: the lyrics written; the sandbox writes them too), else the lyrics or description asked. Timed word by word: GET /music-a/clips/{clip_id}/lyrics.', example: 'A calm morning by the sea' })
  prompt!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The description the song was made from (description mode: gpt_description_prompt), else null.', example: null })
  gpt_description_prompt!: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  negative_tags!: string | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Seconds, read from the file (null until complete).', example: 10 })
  duration!: number | null;

  @ApiProperty({ enum: CLIP_TYPES, description: 'gen: a new song or a continuation; upload: an uploaded file; concat: a joined song; stem: one stem split from a clip (stem_of).', example: 'gen' })
  type!: string;

  @ApiProperty({ type: String, nullable: true, format: 'uuid', description: 'The clip this one continues.', example: null })
  continue_clip_id!: string | null;

  @ApiProperty({ type: Number, nullable: true, description: 'The second of continue_clip_id this clip starts from.', example: null })
  continue_at!: number | null;

  @ApiProperty({ type: [ClipHistoryEntryDto], description: "The chain this clip continues, from the first clip (an upload or a new song) to its parent, each with the second it was cut at. Empty for a clip that continues nothing." })
  history!: ClipHistoryEntryDto[];

  @ApiPropertyOptional({ type: String, format: 'uuid', nullable: true, description: 'On a stem: the clip it was split from.' })
  stem_of?: string | null;

  @ApiPropertyOptional({ type: [ClipHistoryEntryDto], description: 'On a joined clip: its parts in order, each with the second it was cut at (null: kept whole).' })
  concat_history?: ClipHistoryEntryDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Why the clip failed.', example: null })
  error_message!: string | null;
}

export class ClipDto {
  @ApiProperty({ format: 'uuid', description: 'The clip id: continue it (continue_clip_id) or join it (clip_id, clip_ids).' })
  id!: string;

  @ApiProperty({ enum: CLIP_STATUSES, example: 'complete' })
  status!: string;

  @ApiProperty({ type: String, nullable: true, format: 'uri', description: 'Signed link to the MP3 (an upload: its own file), fresh at each read; null until complete and after retention.' })
  audio_url!: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'uri', description: 'Signed link to the cover (PNG); null for an upload.' })
  image_url!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The title its vendor gave it, else the one asked.', example: 'Morning tide' })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The model (mv) that made it; null for an upload.', example: 'chirp-v4' })
  model_name!: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: ClipMetadataDto })
  metadata!: ClipMetadataDto;
}

/** A music, concat or upload task as Suno-style aggregators report it. */
export class MusicTaskDto {
  @ApiProperty({ format: 'uuid' })
  task_id!: string;

  @ApiProperty({ enum: MUSIC_ACTIONS, example: 'MUSIC' })
  action!: string;

  @ApiProperty({
    enum: MUSIC_TASK_STATUSES,
    description: 'SUBMITTED: accepted, waiting for a worker; QUEUED: the upstream is at capacity, waiting for it; IN_PROGRESS; SUCCESS; FAILURE. NOT_START is never answered (a task is submitted as it is accepted).',
    example: 'SUCCESS',
  })
  status!: string;

  @ApiProperty({ description: 'Why the task failed; empty otherwise.', example: '' })
  fail_reason!: string;

  @ApiProperty({ description: 'Unix seconds.', example: 1795000000 })
  submit_time!: number;

  @ApiProperty({ description: 'Unix seconds; 0 until a worker starts it.', example: 1795000001 })
  start_time!: number;

  @ApiProperty({ description: 'Unix seconds; 0 until it ends.', example: 1795000004 })
  finish_time!: number;

  @ApiProperty({ example: '100%' })
  progress!: string;

  @ApiProperty({ type: [ClipDto], description: 'Its clips: two takes for MUSIC (one for a one-take model), the joined song for CONCAT, the file for UPLOAD (its id is the upload id), the stems for STEMS (once it succeeded; each titled by its stem\'s name).' })
  data!: ClipDto[];
}

export class MusicTaskResultDto {
  @ApiProperty({ example: 'success' })
  code!: string;

  @ApiProperty({ example: '' })
  message!: string;

  @ApiProperty({ type: MusicTaskDto })
  data!: MusicTaskDto;
}

export class MusicTaskListResultDto {
  @ApiProperty({ example: 'success' })
  code!: string;

  @ApiProperty({ example: '' })
  message!: string;

  @ApiProperty({ type: [MusicTaskDto], description: 'The tasks found, in the order asked; unknown ids are left out.' })
  data!: MusicTaskDto[];
}

/** The answer of a submit: the new task's id, to fetch. */
export class MusicSubmitResultDto {
  @ApiProperty({ example: 'success' })
  code!: string;

  @ApiProperty({ example: '' })
  message!: string;

  @ApiProperty({ description: 'The task id, for GET /music-a/fetch/{task_id}.', format: 'uuid', example: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' })
  data!: string;
}

@NullAsAbsent()
export class FetchMusicTasksDto {
  @ApiProperty({ type: [String], description: 'Task ids (music, concat or upload), 1 to 100.', example: ['5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e'], minItems: 1, maxItems: 100 })
  @IsArray({ message: 'ids must be an array of task ids' })
  @ArrayMinSize(1, { message: 'ids must hold at least 1 task id' })
  @ArrayMaxSize(100, { message: 'ids must hold at most 100 task ids' })
  @IsString({ each: true, message: 'ids must hold only strings (task ids)' })
  ids!: string[];
}
