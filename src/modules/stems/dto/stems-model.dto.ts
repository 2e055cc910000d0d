import { ApiProperty } from '@nestjs/swagger';
import { STEM_SPLITS } from '../../../vendors/contracts/stems-vendor.js';

/** A stems model callers may ask for (`GET /models`, operation `stems`). */
export class StemsModelDto {
  @ApiProperty({ description: 'The name to ask for.', example: 'stem_separation_v1' })
  name!: string;

  @ApiProperty({ enum: ['stems'], description: 'The operation it serves.', example: 'stems' })
  operation!: 'stems';

  @ApiProperty({ description: 'The vendor behind it (a channel protocol; with the sandbox, the vendor whose model the sandbox mirrors).', example: 'elevenlabs' })
  vendor!: string;

  @ApiProperty({ description: "The vendor's id of the model.", example: 'stem_separation_v1' })
  vendor_model!: string;

  @ApiProperty({ enum: STEM_SPLITS, isArray: true, description: 'The splits it makes (`stems`): two (vocals and instrumental), all (every stem it makes).', example: ['two', 'all'] })
  splits!: string[];

  @ApiProperty({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'The stems each split makes, by name (each a clip titled so).', example: { two: ['vocals', 'instrumental'] } })
  stems!: Record<string, string[]>;

  @ApiProperty({ description: 'It splits only clips its own vendor made (on the channel that made them); false: any clip stored here, uploads too.', example: false })
  own_clips_only!: boolean;

  @ApiProperty({ description: 'Credits charged per task (PRICE_STEMS).', example: 5 })
  credits_per_task!: number;
}
