import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsObject, IsOptional, IsString, IsUUID, Length, Matches, ValidateIf, ValidateNested } from 'class-validator';
import { IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import { FRAME_FITS, type FrameFit } from '../../../vendors/contracts/video-request.js';
import { RESOLUTION_SIDES } from '../../../vendors/contracts/resolution.js';
import { videoCatalogRange } from '../../../vendors/video-vendors.js';
import { DEFAULT_ASPECT_RATIO, PROMPT_MAX_CHARS } from '../../../modules/video/video-task.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const KEYFRAME_TYPES = ['image', 'generation'] as const;
export type KeyframeType = (typeof KEYFRAME_TYPES)[number];

/** What the catalogs' models make: the Luma door's examples, not enumerations (a channel's declared model may make others). */
const RANGE = videoCatalogRange();
/** Luma's video models (the door's examples); the configured models decide what is taken (GET /models). */
export const VIDEO_MODELS = ['ray-2', 'ray-flash-2', 'ray-1-6'] as const;
/** The resolutions the door takes: every class of the gateway's (the video's shorter side: 480 to 2160 px), Luma's 540p, 720p, 1080p and 4k among them; a declared model names these too. */
export const VIDEO_RESOLUTIONS = Object.keys(RESOLUTION_SIDES);
/** Luma's durations (the door's examples); the configured models decide which are taken (GET /models). */
export const VIDEO_DURATIONS = ['5s', '9s'] as const;

export class KeyframeDto {
  @ApiProperty({ enum: KEYFRAME_TYPES, description: '"image": an image by URL; "generation": one of your earlier generations (its last frame).', example: 'image' })
  @IsIn(KEYFRAME_TYPES, { message: 'type must be "image" or "generation"' })
  type!: KeyframeType;

  @ApiPropertyOptional({ description: 'For type "image": the http(s) URL of the image.', example: 'https://example.com/first-frame.jpg' })
  @ValidateIf((o: KeyframeDto) => o.type === 'image')
  @IsHttpUrl()
  url?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'For type "generation": the id of one of your generations.' })
  @ValidateIf((o: KeyframeDto) => o.type === 'generation')
  @IsUUID('all', { message: 'id must be the id (a UUID) of one of your generations' })
  id?: string;
}

export class KeyframesDto {
  @ApiPropertyOptional({ type: KeyframeDto, description: 'First keyframe.' })
  @IsOptional()
  @IsObject({ message: 'frame0 must be an object such as {"type": "image", "url": "https://…"}' })
  @ValidateNested({ message: 'frame0 must be an object such as {"type": "image", "url": "https://…"}' })
  @Type(() => KeyframeDto)
  frame0?: KeyframeDto;

  @ApiPropertyOptional({ type: KeyframeDto, description: 'Second (end) keyframe.' })
  @IsOptional()
  @IsObject({ message: 'frame1 must be an object such as {"type": "image", "url": "https://…"}' })
  @ValidateNested({ message: 'frame1 must be an object such as {"type": "image", "url": "https://…"}' })
  @Type(() => KeyframeDto)
  frame1?: KeyframeDto;
}

/** One of Luma's camera-motion concepts, by key. */
export class ConceptDto {
  @ApiProperty({ description: 'The concept key, as Luma lists them (e.g. "dolly_zoom").', example: 'dolly_zoom' })
  @IsString({ message: 'key must be a string' })
  @Length(1, 64, { message: 'key must be 1 to 64 characters long' })
  key!: string;
}

@NullAsAbsent()
export class CreateGenerationDto {
  @ApiProperty({ description: 'What the video shows.', minLength: 1, maxLength: PROMPT_MAX_CHARS, example: 'A paper boat drifting down a rainy street, cinematic' })
  @IsString({ message: 'prompt must be a string' })
  @Matches(/\S/, { message: 'prompt must not be empty or blank' })
  @MaxChars(PROMPT_MAX_CHARS)
  prompt!: string;

  @ApiPropertyOptional({ description: 'Make the last frame match the first.', default: false, example: false })
  @IsOptional()
  @IsBoolean({ message: 'loop must be a boolean (true or false)' })
  loop?: boolean;

  @ApiPropertyOptional({
    description: `Frame shape, \`<w>:<h>\`: one a configured model makes (GET /models: their \`aspect_ratios\`; the models the gateway knows make ${RANGE.aspectRatios.join(', ')}, and a channel's declared model may make others), else 400 naming aspect_ratio. The sandbox's model \`sandbox\`, named, takes any \`<w>:<h>\` of positive integers up to 4 digits.`,
    pattern: '^[1-9]\\d{0,3}:[1-9]\\d{0,3}$',
    default: DEFAULT_ASPECT_RATIO,
    example: '16:9',
  })
  @IsOptional()
  @IsString({ message: 'aspect_ratio must be a string of the form <w>:<h>, such as "16:9"' })
  @Matches(/^[1-9]\d{0,3}:[1-9]\d{0,3}$/, { message: 'aspect_ratio must have the form <w>:<h> with positive integers, such as "16:9"' })
  aspect_ratio?: string;

  @ApiPropertyOptional({ type: KeyframesDto, description: 'Optional keyframes: frame0 (start) and frame1 (end).' })
  @IsOptional()
  @IsObject({ message: 'keyframes must be an object with frame0 and/or frame1' })
  @ValidateNested({ message: 'keyframes must be an object with frame0 and/or frame1' })
  @Type(() => KeyframesDto)
  keyframes?: KeyframesDto;

  @ApiPropertyOptional({ description: 'http(s) URL notified (POST, the generation record) when the generation is dreaming, completed or failed. Needs a receiver you run.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({
    description: "The model, by the name GET /models lists (Luma's ray-2, ray-flash-2; Kling's, Runway's … as the channels serve them). Without it, any configured model that makes the rest of the request; the record then shows ray-2.",
    example: 'ray-2',
    maxLength: 64,
  })
  @IsOptional()
  @IsString({ message: 'model must be a string naming one of the models GET /models lists' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model must name one of the models GET /models lists (1 to 64 letters, digits and . _ : -)' })
  model?: string;

  @ApiPropertyOptional({ enum: VIDEO_RESOLUTIONS, description: "The video's shorter side: 480p, 540p, 720p, 768p, 1080p or 4k (2160 px); one a configured model makes (GET /models: their `resolutions`), else 400 naming resolution. Without it the sandbox renders about 640x360." })
  @IsOptional()
  @IsIn(VIDEO_RESOLUTIONS, { message: `resolution must be one of ${VIDEO_RESOLUTIONS.join(', ')}` })
  resolution?: string;

  @ApiPropertyOptional({
    description: `Length of the video, \`<seconds>s\`: one a configured model makes (GET /models: their \`durations_s\`; the models the gateway knows make ${RANGE.durations.map((s) => `${s}s`).join(', ')}: Luma's 5s and 9s, Kling's 5s and 10s, Veo's 4s, 6s, 8s …; a channel's declared model may make others), else 400 naming duration. Without it, with \`model\`, the duration that model makes when none is asked (GET /models: its \`default_duration_s\`, such as Veo's 8s); without \`model\`, the one every configured model that could make it makes alike (only Veo channels: 8s; only MiniMax's: 6s), else 5s. The sandbox's model \`sandbox\`, named, takes 1s to 15s.`,
    pattern: '^[1-9]\\d?s$',
    example: '5s',
  })
  @IsOptional()
  @IsString({ message: 'duration must be a string such as "5s"' })
  @Matches(/^[1-9]\d?s$/, { message: 'duration must be whole seconds from 1 to 99 followed by "s", such as "5s" or "10s"' })
  duration?: string;

  @ApiPropertyOptional({ enum: ['video'], description: 'As the Luma SDK sends it; only "video" is offered here.' })
  @IsOptional()
  @IsIn(['video'], { message: 'generation_type must be "video" (this gateway makes video generations only)' })
  generation_type?: 'video';

  @ApiPropertyOptional({ type: ConceptDto, isArray: true, maxItems: 8, description: "Luma's camera-motion concepts; forwarded by the relay provider, recorded (not rendered) by the sandbox." })
  @IsOptional()
  @IsArray({ message: 'concepts must be an array such as [{"key": "dolly_zoom"}]' })
  @ArrayMaxSize(8, { message: 'concepts may hold at most 8 concepts' })
  @ValidateNested({ each: true })
  @Type(() => ConceptDto)
  concepts?: ConceptDto[];

  @ApiPropertyOptional({ enum: FRAME_FITS, description: 'A gateway extension (not Luma\'s): how keyframes.frame0 is fitted to aspect_ratio when the model serving the request takes its video\'s shape from its first frame (Kling\'s image-to-video: GET /models `shape_from_first_frame`). `crop`: its centre at the ratio; `pad`: the whole frame on a blurred fill of itself; `none`: never fitted, so such models do not serve the request. Default: the channel\'s frame_fit, else crop. The video has the asked ratio either way.', example: 'crop' })
  @IsOptional()
  @IsIn(FRAME_FITS, { message: 'fit must be crop, pad or none' })
  fit?: FrameFit;
}
