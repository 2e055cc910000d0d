import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsUUID } from 'class-validator';
import { IsHttpUrl } from '../../../common/validation/validators.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const CONCAT_MIN_CLIPS = 2;
export const CONCAT_MAX_CLIPS = 20;

/** POST /music-a/submit/concat: `clip_id` (Suno's), or `clip_ids` (this gateway's), not both. */
@NullAsAbsent()
export class SubmitConcatDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The last clip of a continuation chain: the song is its chain from the first clip (an upload or a new song), each part cut where the next continues it, then this clip whole.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'clip_id must be the id (a UUID) of one of your clips' })
  clip_id?: string;

  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    minItems: CONCAT_MIN_CLIPS,
    maxItems: CONCAT_MAX_CLIPS,
    description: `Beyond Suno: ${CONCAT_MIN_CLIPS} to ${CONCAT_MAX_CLIPS} of your complete clips, joined whole, end to end, in this order.`,
  })
  @IsOptional()
  @IsArray({ message: 'clip_ids must be an array of clip ids' })
  @ArrayMinSize(CONCAT_MIN_CLIPS, { message: `clip_ids must hold at least ${CONCAT_MIN_CLIPS} clip ids` })
  @ArrayMaxSize(CONCAT_MAX_CLIPS, { message: `clip_ids must hold at most ${CONCAT_MAX_CLIPS} clip ids` })
  @IsUUID('all', { each: true, message: 'clip_ids must hold only clip ids (UUIDs)' })
  clip_ids?: string[];

  @ApiPropertyOptional({ description: 'http(s) URL notified (POST, the task record, signed) on each status change.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({ description: 'Alias of callback_url.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  notify_hook?: string;
}
