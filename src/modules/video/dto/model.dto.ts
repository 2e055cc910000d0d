import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** A model callers may ask for (the `model` of a request), and what it can make. */
export class ModelDto {
  @ApiProperty({ description: 'The name to ask for.', example: 'kling-v2-1' })
  name!: string;

  @ApiProperty({ enum: ['video'], description: 'The operation it serves.', example: 'video' })
  operation!: 'video';

  @ApiProperty({ description: 'The vendor behind it (a channel protocol; sandbox: rendered offline).', example: 'kling' })
  vendor!: string;

  @ApiProperty({ description: "The vendor's id of the model.", example: 'kling-v2-1' })
  vendor_model!: string;

  @ApiProperty({ description: "Whether what it can do is what a channel declared (a vendor model the gateway's catalog does not know: the channel's `models[].spec`), not the catalog's.", example: false })
  declared!: boolean;

  @ApiProperty({ type: [Number], description: 'Durations it makes, in seconds (the Luma door asks them as "<n>s").', example: [5, 10] })
  durations_s!: number[];

  @ApiProperty({ description: 'The duration it makes when a request names this model and no duration (its API\'s default): the task is priced and shown at it. A request naming no model is priced and shown at 5 s, whatever model makes it.', example: 5 })
  default_duration_s!: number;

  @ApiProperty({ type: [String], description: 'Frame shapes it makes; ["any"]: any <w>:<h>.', example: ['16:9', '9:16', '1:1'] })
  aspect_ratios!: string[];

  @ApiProperty({ type: [String], example: ['720p', '1080p'] })
  resolutions!: string[];

  @ApiProperty({ description: 'The resolution it makes, and is priced at, when a request names none (its API\'s default).', example: '720p' })
  default_resolution!: string;

  @ApiProperty({ type: [String], required: false, description: 'When only some pairs are made: `<aspect ratio>@<resolution>`.', example: ['16:9@720p', '9:16@720p'] })
  sizes?: string[];

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'integer' } },
    description: 'The durations it makes at a resolution where fewer than `durations_s` (a request naming that resolution and no duration is made at the first).',
    example: { '1080p': [8] },
  })
  durations_at?: Record<string, number[]>;

  @ApiProperty({ description: 'It makes a video from a prompt alone (no first frame).', example: false })
  text_to_video!: boolean;

  @ApiProperty({ example: true })
  first_frame!: boolean;

  @ApiProperty({ description: 'An end frame (keyframes.frame1).', example: true })
  last_frame!: boolean;

  @ApiProperty({ description: 'A keyframe may be an earlier generation ({"type": "generation"}).', example: false })
  continues!: boolean;

  @ApiProperty({ example: false })
  loop!: boolean;

  @ApiProperty({ example: false })
  seed!: boolean;

  @ApiProperty({ description: 'Generated sound.', example: false })
  audio!: boolean;

  @ApiProperty({ example: true })
  negative_prompt!: boolean;

  @ApiProperty({ description: "Luma's camera-motion concepts.", example: false })
  concepts!: boolean;

  @ApiProperty({ description: "Kling's cfg_scale (how closely to follow the prompt).", example: false })
  cfg_scale!: boolean;

  @ApiProperty({ description: "Kling's camera_control.", example: false })
  camera_control!: boolean;

  @ApiProperty({ example: 2500 })
  max_prompt_chars!: number;

  @ApiProperty({ description: "How many reference images it takes (images the video keeps to, not frames of it: the OpenAI door's input_reference with input_reference_role reference_image); 0: none.", example: 0 })
  reference_images!: number;

  @ApiProperty({ description: 'It takes reference images together with a first or last frame.', example: false })
  references_with_frames!: boolean;

  @ApiProperty({ description: "With a first frame the video takes the frame's shape: a first frame of another shape than the asked aspect ratio is fitted to it first (the request's fit, else the channel's frame_fit, else crop); with fit none such a request is not made by this model.", example: true })
  shape_from_first_frame!: boolean;

  @ApiProperty({ description: 'Credits charged per second of video (PRICE_VIDEO_SECOND).', example: 1 })
  credits_per_second!: number;
}
