import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Luma's states, with the spec's `pending` at creation (Luma says `queued`). */
export const GENERATION_STATES = ['pending', 'dreaming', 'completed', 'failed'] as const;
export type GenerationStateValue = (typeof GENERATION_STATES)[number];

export class KeyframeRefDto {
  @ApiProperty({ enum: ['image', 'generation'], example: 'image' })
  type!: string;

  @ApiPropertyOptional({ description: 'For type "image".', example: 'https://example.com/first-frame.jpg' })
  url?: string;

  @ApiPropertyOptional({ description: 'For type "generation".', format: 'uuid' })
  id?: string;
}

export class KeyframesRefDto {
  @ApiPropertyOptional({ type: KeyframeRefDto })
  frame0?: KeyframeRefDto;

  @ApiPropertyOptional({ type: KeyframeRefDto })
  frame1?: KeyframeRefDto;
}

export class ConceptRefDto {
  @ApiProperty({ example: 'dolly_zoom' })
  key!: string;
}

/** The request as it was made (the spec's four fields, and Luma's when given). */
export class GenerationRequestDto {
  @ApiProperty({ example: 'A paper boat drifting down a rainy street, cinematic' })
  prompt!: string;

  @ApiProperty({ example: '16:9' })
  aspect_ratio!: string;

  @ApiProperty({ example: true })
  enhance!: boolean;

  @ApiProperty({ enum: ['text_to_video', 'image_to_video'], example: 'image_to_video' })
  request_type!: string;

  @ApiProperty({ enum: ['video'], example: 'video' })
  generation_type!: 'video';

  @ApiProperty({ description: 'The model used.', example: 'ray-2' })
  model!: string;

  @ApiProperty({ example: false })
  loop!: boolean;

  @ApiPropertyOptional({ example: '720p' })
  resolution?: string;

  @ApiPropertyOptional({ example: '5s' })
  duration?: string;

  @ApiPropertyOptional({ type: KeyframesRefDto })
  keyframes?: KeyframesRefDto;

  @ApiPropertyOptional({ type: ConceptRefDto, isArray: true })
  concepts?: ConceptRefDto[];

  @ApiPropertyOptional({ example: 'https://example.com/hooks/video' })
  callback_url?: string;
}

export class MediaRefDto {
  @ApiProperty({ description: 'Id of the registered keyframe media (or of the generation it comes from).', example: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f' })
  id!: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  media_type!: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  thumbnail!: string | null;

  @ApiProperty({ enum: ['upload', 'generation'], example: 'upload' })
  type!: string;
}

export class MediaRequestDto {
  @ApiProperty({ type: MediaRefDto, nullable: true, description: 'The end keyframe (frame1), or null.', example: null })
  end!: MediaRefDto | null;

  @ApiProperty({ example: false })
  loop!: boolean;

  @ApiProperty({ enum: ['keyframe', 'text'], example: 'keyframe' })
  prompt_type!: string;

  @ApiProperty({ type: MediaRefDto, nullable: true, description: 'The start keyframe (frame0), or null for a text-only prompt.' })
  start!: MediaRefDto | null;

  @ApiProperty({ description: 'The prompt as used.', example: 'A paper boat drifting down a rainy street, cinematic' })
  text!: string;
}

export class GenerationDto {
  @ApiProperty({ format: 'uuid', example: '3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d' })
  id!: string;

  @ApiProperty({ enum: ['video'], example: 'video' })
  generation_type!: 'video';

  @ApiProperty({ enum: GENERATION_STATES, description: 'pending → dreaming → completed | failed.', example: 'pending' })
  state!: GenerationStateValue;

  @ApiProperty({ description: 'The model used.', example: 'ray-2' })
  model!: string;

  @ApiProperty({ description: 'ISO 8601 UTC with fractional seconds.', example: '2026-11-21T10:00:00.000Z' })
  created_at!: string;

  @ApiProperty({ type: GenerationRequestDto })
  request!: GenerationRequestDto;

  @ApiProperty({ type: MediaRequestDto })
  media_request!: MediaRequestDto;
}

export class GenerationAssetsDto {
  @ApiProperty({ description: 'Signed link to the MP4 (no key needed until it expires).', example: 'http://localhost:3000/media/…?expires=…&signature=…' })
  video!: string;

  @ApiPropertyOptional({ description: 'Signed link to a thumbnail image.', example: 'http://localhost:3000/media/…?expires=…&signature=…' })
  image?: string;
}

/** The generation as GET shows it: the created record plus its outcome. As in Luma, what is not there is left out. */
export class GenerationDetailDto extends GenerationDto {
  @ApiPropertyOptional({ description: 'Why the generation failed; only on a failed generation.', example: 'the upstream failed the generation: content moderation' })
  failure_reason?: string;

  @ApiPropertyOptional({ type: GenerationAssetsDto, description: 'The results; only on a completed generation.' })
  assets?: GenerationAssetsDto;

  @ApiProperty({ description: 'True when the result files were deleted after RESULT_RETENTION_DAYS.', example: false })
  media_expired!: boolean;
}

export class GenerationListDto {
  @ApiProperty({ type: GenerationDetailDto, isArray: true })
  generations!: GenerationDetailDto[];

  @ApiProperty({ type: 'integer', description: "As Luma: the number of generations returned (this page's), not a total.", example: 10 })
  count!: number;

  @ApiProperty({ description: 'Whether more follow this page.', example: true })
  has_more!: boolean;

  @ApiProperty({ type: 'integer', example: 10 })
  limit!: number;

  @ApiProperty({ type: 'integer', example: 0 })
  offset!: number;
}

/** GET /ping, as Luma answers it. */
export class PingDto {
  @ApiProperty({ example: 'pong' })
  message!: string;
}
