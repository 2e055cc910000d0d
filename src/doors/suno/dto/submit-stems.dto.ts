import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { IsHttpUrl } from '../../../common/validation/validators.js';
import { STEM_SPLITS, type StemSplit } from '../../../vendors/contracts/stems-vendor.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

/** POST /music-a/submit/stems: a clip stored here and the split asked. */
@NullAsAbsent()
export class SubmitStemsDto {
  @ApiProperty({ format: 'uuid', description: 'One of your complete clips (a take, an upload, a joined song or a stem) to split.', example: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' })
  @IsUUID('all', { message: 'clip_id must be the id (a UUID) of one of your clips' })
  clip_id!: string;

  @ApiPropertyOptional({ enum: STEM_SPLITS, default: 'two', description: 'two: vocals and instrumental; all: every stem the model makes (ElevenLabs: six). GET /models lists what each stems model makes.' })
  @IsOptional()
  @IsIn(STEM_SPLITS, { message: `stems must be one of ${STEM_SPLITS.join(', ')}` })
  stems?: StemSplit;

  @ApiPropertyOptional({ description: 'http(s) URL notified (POST, the task record, signed) on each status change.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({ description: 'Alias of callback_url.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  notify_hook?: string;
}
