import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Length, Matches, Max, Min, NotContains, ValidateIf, ValidateNested } from 'class-validator';
import { IsHttpUrl } from '../../../common/validation/validators.js';

import { FRAME_FITS, type FrameFit } from '../../../vendors/contracts/video-request.js';
import { BILLED_UNITS, type BilledUnit } from '../../../vendors/contracts/vendor-billing.js';
import { BASE_URL_RULE, CHANNEL_OPERATIONS, CHANNEL_PROTOCOLS, PROTOCOLS_IN_WORDS } from '../channel-protocols.js';
import { DECLARABLE_OPERATIONS, type DeclarableOperation, DECLARED_IMAGE_SPEC_SCHEMA, DECLARED_SPEECH_SPEC_SCHEMA, DECLARED_VIDEO_SPEC_SCHEMA } from '../declared-specs.js';
import { RefusesUnknownFields } from '../../../common/validation/body-fields.js';

export const CHANNEL_STATUSES = ['enabled', 'disabled', 'auto_disabled'] as const;

/** What stands for a credential's hidden part where the API answers it (`…cdef`): never a key of its own. */
export const MASK = '…';

/** Write-only: stored sealed (AES-256-GCM), never answered. The fields a protocol needs: kling access_key + secret_key, the others api_key. */
export class ChannelCredentialsDto {
  @ApiPropertyOptional({ description: "Kling's access key.", writeOnly: true, maxLength: 512 })
  @IsOptional()
  @IsString({ message: 'credentials.access_key must be a string' })
  @Length(1, 512, { message: 'credentials.access_key must be 1 to 512 characters long' })
  @NotContains(MASK, { message: `credentials.access_key is the masked value the API answers (${MASK}cdef): send the real key, or leave credentials out to keep it` })
  access_key?: string;

  @ApiPropertyOptional({ description: "Kling's secret key.", writeOnly: true, maxLength: 512 })
  @IsOptional()
  @IsString({ message: 'credentials.secret_key must be a string' })
  @Length(1, 512, { message: 'credentials.secret_key must be 1 to 512 characters long' })
  @NotContains(MASK, { message: `credentials.secret_key is the masked value the API answers (${MASK}cdef): send the real key, or leave credentials out to keep it` })
  secret_key?: string;

  @ApiPropertyOptional({ description: 'The API key (a Bearer token) of every protocol but kling.', writeOnly: true, maxLength: 512 })
  @IsOptional()
  @IsString({ message: 'credentials.api_key must be a string' })
  @Length(1, 512, { message: 'credentials.api_key must be 1 to 512 characters long' })
  @NotContains(MASK, { message: `credentials.api_key is the masked value the API answers (${MASK}cdef): send the real key, or leave credentials out to keep it` })
  api_key?: string;
}

const MODEL_NAME_RULE = { message: 'models[].name must be 1 to 64 characters: letters, digits and . _ : -' };

/** What one model costs the company on this channel (in the vendor's money, as the operator counts it). */
export class ChannelModelPriceDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'number' }, description: 'Per second of video, by resolution (540p, 720p, 1080p, 4k); "*" for any.', example: { '720p': 0.05, '1080p': 0.1 } })
  @IsOptional()
  @IsObject({ message: 'models[].price.per_second must be an object such as {"720p": 0.05}' })
  per_second?: Record<string, number>;

  @ApiPropertyOptional({ description: 'Per image made.', example: 0.04, minimum: 0 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'models[].price.per_image must be a number from 0' })
  @Min(0, { message: 'models[].price.per_image must be a number from 0' })
  per_image?: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'number' }, description: 'Images only: per image by size (1024x1024), quality (low, medium, high), <size>@<quality> or "*"; the most specific wins, then per_image.', example: { high: 0.17, '1024x1024@low': 0.011 } })
  @IsOptional()
  @IsObject({ message: 'models[].price.per_image_by must be an object such as {"high": 0.17}' })
  per_image_by?: Record<string, number>;

  @ApiPropertyOptional({
    type: 'object',
    properties: Object.fromEntries(BILLED_UNITS.map((unit) => [unit, { type: 'number', minimum: 0 }])),
    additionalProperties: false,
    description:
      "Video only: what one unit of what the vendor reports it billed for a task costs the company, by its unit: Kling's units (final_unit_deduction), Runway's credits, Seedance's tokens (usage.completion_tokens), Wan's seconds. The task's billed cost is that amount times this price, kept beside its cost by per_second (GET /admin/usage, GET /admin/tasks/{id}/attempts); billed seconds with no price here are priced per_second at the task's resolution.",
    example: { tokens: 0.0000012, units: 0.14 },
  })
  @IsOptional()
  @IsObject({ message: `models[].price.per_billed_unit must be an object such as {"tokens": 0.0000012} (units: ${BILLED_UNITS.join(', ')})` })
  per_billed_unit?: Partial<Record<BilledUnit, number>>;

  @ApiPropertyOptional({ description: 'Operations priced by their text (speech): per 1,000 characters of input.', example: 0.015, minimum: 0 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'models[].price.per_1k_chars must be a number from 0' })
  @Min(0, { message: 'models[].price.per_1k_chars must be a number from 0' })
  per_1k_chars?: number;

  @ApiPropertyOptional({ description: "Music: one task's song (all the takes its model makes).", example: 0.1, minimum: 0 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'models[].price.per_song must be a number from 0' })
  @Min(0, { message: 'models[].price.per_song must be a number from 0' })
  per_song?: number;
}

/** A model a channel serves: the name callers use, and the vendor's id of it. */
export class ChannelModelDto {
  @ApiProperty({ description: 'The name callers ask for (the `model` of a request); unique on the channel.', example: 'kling-v2-1', maxLength: 64 })
  @IsString(MODEL_NAME_RULE)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, MODEL_NAME_RULE)
  name!: string;

  @ApiProperty({ description: "The vendor's id of the model: one of its catalog (GET /admin/protocols, GET /models), or, with spec, one the catalog does not know (a declared model).", example: 'kling-v2-1', maxLength: 64 })
  @IsString({ message: 'models[].vendor_model must be a string' })
  @Length(1, 64, { message: 'models[].vendor_model must be 1 to 64 characters long' })
  // a vendor's ids have no spaces: one with a space or a control character is a typo (a catalog id with a
  // trailing space would otherwise pass for a model the catalog does not know, and reach the vendor so)
  @Matches(/^[^\s\p{Cc}]+$/u, { message: 'models[].vendor_model must not contain spaces or control characters' })
  vendor_model!: string;

  @ApiPropertyOptional({
    enum: DECLARABLE_OPERATIONS,
    description: 'The operation a declared model serves: required on a channel that takes more than one of video, image and speech, else the one it takes (stored either way). A catalog model\'s is its catalog\'s.',
    example: 'video',
  })
  @IsOptional()
  @IsIn(DECLARABLE_OPERATIONS, { message: `models[].operation must be one of ${DECLARABLE_OPERATIONS.join(', ')}` })
  operation?: DeclarableOperation;

  @ApiPropertyOptional({
    oneOf: [DECLARED_VIDEO_SPEC_SCHEMA, DECLARED_IMAGE_SPEC_SCHEMA, DECLARED_SPEECH_SPEC_SCHEMA],
    description:
      "Declares a vendor model the gateway's catalog does not know: what it can do, in its operation's terms (a video model's durations, resolutions, aspect ratios, frames, reference images, sound, seed …; an image model's sizes, shapes, classes, n, references, edits …; a speech model's voices, voice ids, input length, instructions, speeds). A capability left out is false, so a request asking it is refused, never dropped; one no model of the protocol the gateway knows has is refused here (its adapter has no words for it). The model then routes, is priced and is listed (GET /models, `declared: true`) as a catalog model is. Refused for a catalog model, which keeps its catalog's spec. docs/operators/channels.md, \"Declared models\".",
    example: { durations: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], resolutions: ['480p', '720p'], aspect_ratios: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'], first_frame: true, last_frame: true, seed: true, reference_images: 4 },
  })
  @IsOptional()
  @IsObject({ message: 'models[].spec must be an object: what the declared model can do' })
  spec?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: "Operations whose models speak in voices (speech): the voice names callers ask for (OpenAI's alloy, coral, … or names of your own), each mapped to this vendor's voice id; added to the model's own mapping, a name given here replacing its. A model that takes no voice id (OpenAI's tts-1 and tts-1-hd) is mapped only to its own voices.",
    example: { alloy: '21m00Tcm4TlvDq8ikWAM', narrator: 'pNInz6obpgDQGcFmaJgB' },
  })
  @IsOptional()
  @IsObject({ message: "models[].voices must be an object mapping voice names to the vendor's voice ids" })
  voices?: Record<string, string>;

  @ApiPropertyOptional({ type: ChannelModelPriceDto, description: 'What it costs the company.' })
  @IsOptional()
  @IsObject({ message: 'models[].price must be an object: {per_second} or {per_image}' })
  @ValidateNested()
  @Type(() => ChannelModelPriceDto)
  price?: ChannelModelPriceDto;
}

const NAME_RULE = { message: 'name must be 1 to 128 characters: letters, digits, spaces and - _ . ( )' };

@RefusesUnknownFields()
export class CreateChannelDto {
  @ApiProperty({ description: 'Unique among channels.', example: 'kling-team-a', minLength: 1, maxLength: 128 })
  @IsString(NAME_RULE)
  @Matches(/^[A-Za-z0-9][A-Za-z0-9 _.()-]{0,127}$/, NAME_RULE)
  name!: string;

  @ApiProperty({ enum: CHANNEL_OPERATIONS, isArray: true, description: `The operations it takes, as its protocol serves them (see protocol).`, example: ['expand'] })
  @IsArray({ message: `operations must be an array of: ${CHANNEL_OPERATIONS.join(', ')}` })
  @ArrayMinSize(1, { message: 'operations must name at least one operation' })
  @ArrayMaxSize(CHANNEL_OPERATIONS.length, { message: `operations must name each of ${CHANNEL_OPERATIONS.join(', ')} at most once` })
  @IsIn(CHANNEL_OPERATIONS, { each: true, message: `operations must hold only ${CHANNEL_OPERATIONS.join(', ')}` })
  operations!: (typeof CHANNEL_OPERATIONS)[number][];

  @ApiProperty({ enum: CHANNEL_PROTOCOLS, example: 'kling', description: `${PROTOCOLS_IN_WORDS}.` })
  @IsIn(CHANNEL_PROTOCOLS, { message: `protocol must be one of ${CHANNEL_PROTOCOLS.join(', ')}` })
  protocol!: (typeof CHANNEL_PROTOCOLS)[number];

  @ApiProperty({ description: `Per operation: ${BASE_URL_RULE}.`, example: 'https://api-singapore.klingai.com', maxLength: 2048 })
  @IsHttpUrl()
  base_url!: string;

  @ApiProperty({ type: ChannelCredentialsDto, description: 'Write-only. kling: access_key and secret_key; luma, suno, gateway: api_key.' })
  @IsObject({ message: 'credentials must be an object: {access_key, secret_key} or {api_key}' })
  @ValidateNested()
  @Type(() => ChannelCredentialsDto)
  credentials!: ChannelCredentialsDto;

  @ApiPropertyOptional({ description: 'Share of new tasks among channels of the same priority (0: only when no other has weight).', minimum: 0, maximum: 1000, default: 100 })
  @IsOptional()
  @IsInt({ message: 'weight must be an integer from 0 to 1000' })
  @Min(0, { message: 'weight must be an integer from 0 to 1000' })
  @Max(1000, { message: 'weight must be an integer from 0 to 1000' })
  weight?: number;

  @ApiPropertyOptional({ description: 'Higher first: a channel is used only when none of a higher priority can take the task.', minimum: -1000, maximum: 1000, default: 0 })
  @IsOptional()
  @IsInt({ message: 'priority must be an integer from -1000 to 1000' })
  @Min(-1000, { message: 'priority must be an integer from -1000 to 1000' })
  @Max(1000, { message: 'priority must be an integer from -1000 to 1000' })
  priority?: number;

  @ApiPropertyOptional({ type: Number, nullable: true, description: "Tasks it runs at once (the account's concurrency); null: no cap.", minimum: 1, maximum: 100000 })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsInt({ message: 'max_running must be an integer from 1 to 100000, or null' })
  @Min(1, { message: 'max_running must be an integer from 1 to 100000, or null' })
  @Max(100000, { message: 'max_running must be an integer from 1 to 100000, or null' })
  max_running?: number | null;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: 'An upstream task of this channel still working after this many seconds is given up: cancelled where the vendor can, its cost kept, and the task goes on to the next capable channel (RELAY_UPSTREAM_ATTEMPTS). null: no limit but the task\'s deadline.',
    minimum: 1,
    maximum: 86400,
    example: null,
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsInt({ message: 'stall_after_s must be an integer from 1 to 86400, or null' })
  @Min(1, { message: 'stall_after_s must be an integer from 1 to 86400, or null' })
  @Max(86400, { message: 'stall_after_s must be an integer from 1 to 86400, or null' })
  stall_after_s?: number | null;

  @ApiPropertyOptional({
    enum: FRAME_FITS,
    nullable: true,
    description:
      "Video channels whose vendor takes its video's shape from the first frame (Kling's image-to-video): how a first frame of another shape than the asked aspect ratio is fitted to it before it is sent, when the request does not say (its `fit`). `crop`: its centre at the ratio; `pad`: the whole frame on a blurred fill of itself; `none`: never fitted (such a request is then not routed here). null: the gateway's default, crop.",
    example: null,
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsIn(FRAME_FITS, { message: 'frame_fit must be crop, pad or none, or null' })
  frame_fit?: FrameFit | null;

  @ApiPropertyOptional({ type: ChannelModelDto, isArray: true, maxItems: 64, description: "The models it serves (video channels). Empty or absent: every model of its vendor's catalog, under the vendor's ids." })
  @IsOptional()
  @IsArray({ message: 'models must be an array such as [{"name": "kling-v2-1", "vendor_model": "kling-v2-1"}]' })
  @ArrayMaxSize(64, { message: 'models may hold at most 64 models' })
  @ValidateNested({ each: true })
  @Type(() => ChannelModelDto)
  models?: ChannelModelDto[];
}

/** PATCH: any of the fields; credentials, when given, replace the stored ones whole. */
@RefusesUnknownFields()
export class UpdateChannelDto extends PartialType(CreateChannelDto) {}

/** What answers show of the credentials: the last 4 characters of each. */
export class ChannelCredentialHintsDto {
  @ApiPropertyOptional({ example: '…9f2c' })
  access_key?: string;

  @ApiPropertyOptional({ example: '…a7b1' })
  secret_key?: string;

  @ApiPropertyOptional({ example: '…k3d4' })
  api_key?: string;
}

/** How a channel is doing: its circuit, and its requests over the last 5 minutes. */
export class ChannelHealthDto {
  @ApiProperty({ enum: ['closed', 'open', 'half_open'], description: 'open: no task goes to it until open_until; then one probe (half_open) closes or reopens it.', example: 'closed' })
  state!: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null })
  open_until!: string | null;

  @ApiProperty({ description: 'Failures in a row (CHANNEL_FAILURE_THRESHOLD opens the circuit).', example: 0 })
  consecutive_failures!: number;

  @ApiProperty({ description: 'Creates and tests sent to it in the last 5 minutes.', example: 12 })
  requests_5m!: number;

  @ApiProperty({ type: Number, nullable: true, description: 'Share of those it answered (took the task, refused the task itself, passed a test), 0 to 1; null without requests.', example: 1 })
  success_rate_5m!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Median time it took to answer them, in ms; null without requests.', example: 240 })
  p50_latency_ms_5m!: number | null;

  @ApiProperty({ description: 'Unfinished tasks it holds.', example: 0 })
  running_tasks!: number;

  @ApiProperty({ type: String, nullable: true, description: "Its last refusal or failure, in the upstream's words (never a credential).", example: null })
  last_error!: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null })
  last_error_at!: string | null;
}

export class ChannelDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'kling-team-a' })
  name!: string;

  @ApiProperty({ type: [String], example: ['expand'] })
  operations!: string[];

  @ApiProperty({ enum: CHANNEL_PROTOCOLS })
  protocol!: string;

  @ApiProperty({ example: 'https://api-singapore.klingai.com' })
  base_url!: string;

  @ApiProperty({ type: ChannelCredentialHintsDto, description: 'The last 4 characters of each credential; a channel from RELAY_* shows the variables that hold them.' })
  credentials!: ChannelCredentialHintsDto;

  @ApiProperty({ example: 100 })
  weight!: number;

  @ApiProperty({ example: 0 })
  priority!: number;

  @ApiProperty({ type: Number, nullable: true, example: null })
  max_running!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Seconds after which an upstream task of it still working is given up and the task fails over; null: none.', example: null })
  stall_after_s!: number | null;

  @ApiProperty({ enum: FRAME_FITS, nullable: true, description: "How a video's first frame is fitted to the asked ratio for a vendor that takes the frame's shape, when the request does not say; null: the gateway's default (crop).", example: null })
  frame_fit!: FrameFit | null;

  @ApiProperty({ type: ChannelModelDto, isArray: true, description: "The models it serves as configured; empty: its vendor's whole catalog under the vendor's ids." })
  models!: ChannelModelDto[];

  @ApiProperty({ enum: CHANNEL_STATUSES, example: 'enabled' })
  status!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Why it is disabled (by whom, or the upstream\'s words).', example: null })
  status_reason!: string | null;

  @ApiProperty({ enum: ['admin', 'config'], description: 'admin: made with this API; config: defined by RELAY_<OP>_URL at start.' })
  source!: string;

  @ApiProperty({ description: 'Unfinished tasks it holds (running, or created upstream and polled).', example: 0 })
  running_tasks!: number;

  @ApiProperty({ type: String, nullable: true, description: 'Its last refusal or failure, in the upstream\'s words (never a credential).', example: null })
  last_error!: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null })
  last_error_at!: string | null;

  @ApiProperty({ enum: ['closed', 'open', 'half_open'], description: 'open (after CHANNEL_FAILURE_THRESHOLD failures in a row, or for an upstream\'s Retry-After): no task goes to it until circuit_open_until; then one probe (half_open) closes or reopens it.', example: 'closed' })
  circuit_state!: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null })
  circuit_open_until!: string | null;

  @ApiProperty({ description: 'Failures in a row (CHANNEL_FAILURE_THRESHOLD opens the circuit).', example: 0 })
  consecutive_failures!: number;

  @ApiProperty({ type: ChannelHealthDto })
  health!: ChannelHealthDto;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

/** POST /admin/channels/{id}/test: what the upstream answered to a cheap call with the channel's credentials. */
export class ChannelTestDto {
  @ApiProperty({ description: 'The upstream accepted the credentials.', example: true })
  ok!: boolean;

  @ApiProperty({ type: Number, nullable: true, description: "The upstream's HTTP status (null: no answer).", example: 200 })
  status_code!: number | null;

  @ApiProperty({ example: 182 })
  latency_ms!: number;

  @ApiProperty({ description: "What happened, in the upstream's words when it refused.", example: 'the upstream accepted the credentials' })
  message!: string;

  @ApiProperty({ type: ChannelDto, description: 'The channel after the test (a pass brings an auto-disabled channel back; a refusal of its credentials auto-disables it).' })
  channel!: ChannelDto;
}

/** One create request a task sent to a channel, and what came of it. */
export class TaskAttemptDto {
  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiProperty({
    enum: ['accepted', 'busy', 'unreachable', 'refused_account', 'failed', 'ambiguous', 'abandoned', 'gateway_error'],
    description:
      'accepted: the channel took it (an upstream task was made); busy / unreachable / refused_account: it provably did not, and the next channel was tried; failed: the task itself was refused (which ends it, or, refused for its content with RELAY_FAILOVER_ON_CONTENT, the next channel was tried); ambiguous: no answer after sending (looked up there next); abandoned: the upstream task the channel took failed there or stalled past its limit, was cancelled where the vendor can, and the task went on to the next channel; gateway_error: the task ended for a reason of the gateway\'s own (no enabled channel can make it, and why; no channel could take it in time, the channel holding it is gone, an upstream or its result could not be reached), not a request: its owner read a generic reason (for a dead end, why in words it can act on, without channel names), and the message here is the detail.',
  })
  outcome!: string;

  @ApiProperty({ type: String, nullable: true, format: 'uuid' })
  channel_id!: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The channel's name (null when it was RELAY_EXPAND_URL before channels existed).", example: 'kling-a' })
  channel!: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The upstream's words; on gateway_error, the gateway's (which channel, host or rule).", example: null })
  message!: string | null;

  @ApiProperty({ type: Number, nullable: true, description: 'How long the request took, in ms.', example: 230 })
  latency_ms!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'On accepted: the model asked for, by the name callers use.', example: 'ray-2' })
  model!: string | null;

  @ApiProperty({ type: String, nullable: true, description: "On accepted: the upstream's id of the task it made.", example: null })
  upstream_id!: string | null;

  @ApiProperty({ type: Number, nullable: true, description: "On accepted: what the upstream task costs the company, by the channel's price of the model (null: no price set).", example: 0.5 })
  cost!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'On accepted, once the upstream task ended: what the vendor reported it billed for it, in billed_unit (null: not reported, or not yet).', example: 1 })
  billed_amount!: number | null;

  @ApiProperty({ type: String, enum: BILLED_UNITS, nullable: true, description: "The unit of billed_amount: Kling's units, Runway's credits, Seedance's tokens, Wan's seconds.", example: 'units' })
  billed_unit!: BilledUnit | null;

  @ApiProperty({ type: Number, nullable: true, description: "billed_amount at the channel's price of the model (price.per_billed_unit; billed seconds at per_second): what the vendor's figure costs the company, beside cost (null: no price for that unit).", example: 0.5 })
  billed_cost!: number | null;

  @ApiProperty({ description: 'Whether billed_cost differs from cost by more than BILLED_COST_TOLERANCE × cost (both known).', example: false })
  billing_mismatch!: boolean;
}
