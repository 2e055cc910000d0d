import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MUSIC_TASK_STATUSES } from './music-task.dto.js';

export const LYRICS_STATUSES = ['submitted', 'queued', 'running', 'complete', 'error'] as const;

/** One version of lyrics written, beside the first. */
export class LyricsVersionDto {
  @ApiProperty({ type: String, nullable: true, example: 'Coastline' })
  title!: string | null;

  @ApiProperty({ description: 'The lyrics, with their section tags ([Verse], [Chorus], [Bridge]).', example: '[Verse]\nDriving down the coast…' })
  text!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The styles the vendor suggests for the song, where it gives them.', example: null })
  style!: string | null;
}

/** The lyrics of a task (new-api's `SunoLyrics`): the first version written; empty until the task succeeds. */
export class LyricsDataDto {
  @ApiProperty({ format: 'uuid', description: 'The task id.' })
  id!: string;

  @ApiProperty({ description: 'The lyrics, with their section tags ([Verse], [Chorus], [Bridge]); empty until SUCCESS.', example: '[Verse]\nDriving down the coast with the windows down\n…\n\n[Chorus]\n…' })
  text!: string;

  @ApiProperty({ description: 'Their title; empty until SUCCESS.', example: 'Coastline' })
  title!: string;

  @ApiProperty({ enum: LYRICS_STATUSES, example: 'complete' })
  status!: string;

  @ApiPropertyOptional({ type: [LyricsVersionDto], description: 'Every version written, the first included, where the model wrote more than one (sunoapi.org writes two).' })
  versions?: LyricsVersionDto[];
}

/** A lyrics task as new-api reports it (action LYRICS). */
export class LyricsTaskDto {
  @ApiProperty({ format: 'uuid' })
  task_id!: string;

  @ApiProperty({ enum: ['LYRICS'], example: 'LYRICS' })
  action!: string;

  @ApiProperty({ enum: MUSIC_TASK_STATUSES, description: 'SUBMITTED, QUEUED (the upstream is at capacity), IN_PROGRESS, SUCCESS, FAILURE.', example: 'SUCCESS' })
  status!: string;

  @ApiProperty({ description: 'Why the task failed; empty otherwise.', example: '' })
  fail_reason!: string;

  @ApiProperty({ description: 'Unix seconds.', example: 1795000000 })
  submit_time!: number;

  @ApiProperty({ description: 'Unix seconds; 0 until a worker starts it.', example: 1795000001 })
  start_time!: number;

  @ApiProperty({ description: 'Unix seconds; 0 until it ends.', example: 1795000002 })
  finish_time!: number;

  @ApiProperty({ example: '100%' })
  progress!: string;

  @ApiProperty({ type: LyricsDataDto })
  data!: LyricsDataDto;
}
