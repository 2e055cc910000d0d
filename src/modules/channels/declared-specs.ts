import { z } from 'zod';
import { withArticle } from '../../common/words.js';
import { AppError } from '../../common/errors/app-error.js';
import { IMAGE_RESOLUTIONS, type ImageModelSpec } from '../../vendors/contracts/image-request.js';
import { RESOLUTION_SIDES } from '../../vendors/contracts/resolution.js';
import { SPEECH_MAX_INPUT, type SpeechModelSpec } from '../../vendors/contracts/speech-vendor.js';
import type { VideoModelSpec } from '../../vendors/contracts/video-request.js';

/**
 * What an operator declares a vendor model can do when the gateway's catalog does not know it (a channel's
 * `models[].spec`), in the operation's own terms: the fields of `VideoModelSpec` / `ImageModelSpec`, named as
 * the admin API names things (snake_case). Parsed with zod, whose issues carry the path of the value they
 * refuse, so each refusal names its field (`models[0].spec.durations[2] must be …`); strict, so an unknown
 * field is refused rather than ignored. A capability left out is false (a request asking it is refused, never
 * dropped); the lists have no defaults.
 */

/** The longest duration a door can ask (their `seconds`/`duration` take 1 to 99 whole seconds). */
const MAX_SECONDS = 99;
/** The longest prompt a video door takes (PROMPT_MAX_CHARS). */
const MAX_VIDEO_PROMPT = 5000;
/** A declared model's prompt limit when it says none. */
const DEFAULT_PROMPT_CHARS = 2000;
const RATIO = /^[1-9]\d{0,3}:[1-9]\d{0,3}$/;
const VIDEO_RESOLUTIONS = Object.keys(RESOLUTION_SIDES);
const IMAGE_CLASSES = Object.keys(IMAGE_RESOLUTIONS);
const QUALITIES = ['low', 'medium', 'high'] as const;

const flag = z.boolean('must be true or false').optional();
const int = (min: number, max: number, what = 'a whole number') => z.int(`must be ${what} from ${min} to ${max}`).min(min, `must be ${what} from ${min} to ${max}`).max(max, `must be ${what} from ${min} to ${max}`);
/** A list of distinct values, 1 to `max` of them. */
const list = <T extends z.ZodType>(item: T, max: number, example: string) =>
  z
    .array(item, `must be a list such as ${example}`)
    .min(1, `must hold at least one value, such as ${example}`)
    .max(max, `must hold at most ${max} values`)
    .refine((values) => new Set(values).size === values.length, `must not name a value twice`);
const seconds = int(1, MAX_SECONDS, 'a whole number of seconds');
/**
 * Durations, shortest first: a model's first is what a request that asks none is priced at when the spec says
 * no `default_duration_s` (the doors' own defaults aside), so a list out of order is refused rather than read
 * one way or the other.
 */
const durationList = (example: string) =>
  list(seconds, MAX_SECONDS, example).refine(
    // judged once each value is one (a refusal of a value is enough)
    (values) => !values.every((v) => seconds.safeParse(v).success) || values.every((v, i) => i === 0 || values[i - 1] <= v),
    'must be in ascending order (shortest first), such as [5, 10]',
  );
const videoResolution = z.enum(VIDEO_RESOLUTIONS, `must be one of ${VIDEO_RESOLUTIONS.join(', ')}`);
const ratio = z.string('must be a shape <w>:<h>, such as "16:9"').regex(RATIO, 'must be a shape <w>:<h> of whole numbers (1 to 4 digits), such as "16:9"');

const videoSchema = z
  .strictObject({
    durations: durationList('[5, 10]'),
    resolutions: list(videoResolution, VIDEO_RESOLUTIONS.length, '["720p", "1080p"]'),
    aspect_ratios: z.union([z.literal('any'), list(ratio, 32, '["16:9", "9:16"]')], 'must be "any" or a list of shapes such as ["16:9", "9:16"]'),
    durations_at: z.partialRecord(videoResolution, durationList('[8]'), 'must map a resolution to the durations it makes there, such as {"1080p": [8]}').optional(),
    sizes: list(z.string('must be <aspect ratio>@<resolution>, such as "16:9@720p"').regex(/^[1-9]\d{0,3}:[1-9]\d{0,3}@\w+$/, 'must be <aspect ratio>@<resolution>, such as "16:9@720p"'), 256, '["16:9@720p"]').optional(),
    text_to_video: flag,
    first_frame: flag,
    last_frame: flag,
    last_frame_alone: flag,
    continues: flag,
    loop: flag,
    seed: flag,
    audio: flag,
    negative_prompt: flag,
    concepts: flag,
    cfg_scale: flag,
    camera_control: flag,
    max_prompt_chars: int(1, MAX_VIDEO_PROMPT, 'a whole number of characters').optional(),
    shape_from_image: flag,
    last_frame_resolution: videoResolution.optional(),
    reference_images: int(0, 16).optional(),
    references_with_frames: flag,
    frame_min_side: int(1, 8192, 'a whole number of pixels').optional(),
    default_duration_s: seconds.optional(),
    default_resolution: videoResolution.optional(),
  })
  .superRefine((s, ctx) => {
    const fault = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const resolutions: readonly string[] = s.resolutions ?? [];
    for (const [resolution, durations] of Object.entries(s.durations_at ?? {})) {
      if (!resolutions.includes(resolution)) fault(['durations_at', resolution], `names a resolution the model does not make (resolutions: ${resolutions.join(', ')})`);
      durations?.forEach((d, i) => {
        if (!s.durations?.includes(d)) fault(['durations_at', resolution, i], `must be one of durations (${s.durations?.join(', ')}), not ${d}`);
      });
    }
    s.sizes?.forEach((size, i) => {
      const [shape, resolution] = size.split('@');
      if (!resolutions.includes(resolution)) fault(['sizes', i], `names a resolution the model does not make (resolutions: ${resolutions.join(', ')}), not ${resolution}`);
      else if (Array.isArray(s.aspect_ratios) && !s.aspect_ratios.includes(shape)) fault(['sizes', i], `names a shape not in aspect_ratios (${s.aspect_ratios.join(', ')}), not ${shape}`);
    });
    if (s.last_frame_resolution !== undefined && !resolutions.includes(s.last_frame_resolution)) fault(['last_frame_resolution'], `must be one of resolutions (${resolutions.join(', ')})`);
    // judged once the value and the list are each well formed (a refusal of either is enough)
    const wellFormed = (schema: z.ZodType, values: unknown[]) => values.every((v) => schema.safeParse(v).success);
    if (s.default_duration_s !== undefined && Array.isArray(s.durations) && wellFormed(seconds, [s.default_duration_s, ...s.durations]) && !s.durations.includes(s.default_duration_s)) fault(['default_duration_s'], `must be one of durations (${s.durations.join(', ')}), not ${s.default_duration_s}`);
    if (s.default_resolution !== undefined && wellFormed(videoResolution, [s.default_resolution, ...resolutions]) && !resolutions.includes(s.default_resolution)) fault(['default_resolution'], `must be one of resolutions (${resolutions.join(', ')}), not ${s.default_resolution}`);
    if (s.last_frame_alone && !s.last_frame) fault(['last_frame_alone'], 'needs last_frame: true');
    if (s.shape_from_image && !s.first_frame) fault(['shape_from_image'], 'needs first_frame: true (it says the video takes its first frame\'s shape)');
    if (s.references_with_frames && !s.reference_images) fault(['references_with_frames'], 'needs reference_images above 0');
    if (!s.text_to_video && !s.first_frame && !s.reference_images) fault([], 'says of no way the model starts a video: set text_to_video, first_frame or reference_images');
  });

const imageSchema = z
  .strictObject({
    sizes: z
      .union([z.literal('any'), list(z.string('must be a size WxH, such as "1024x1024"').regex(/^[1-9]\d{1,4}x[1-9]\d{1,4}$/, 'must be a size WxH, such as "1024x1024"'), 64, '["1024x1024"]')], 'must be "any" or a list of sizes such as ["1024x1024", "1536x1024"]')
      .optional(),
    size_rule: z
      .strictObject({
        multiple_of: int(1, 256),
        min_side: int(1, 16384, 'a whole number of pixels'),
        max_side: int(1, 16384, 'a whole number of pixels'),
        max_pixels: int(1, 16384 * 16384, 'a whole number of pixels'),
      })
      .optional(),
    aspect_ratios: list(ratio, 32, '["1:1", "16:9"]'),
    resolutions: list(z.enum(IMAGE_CLASSES, `must be one of ${IMAGE_CLASSES.join(', ')}`), IMAGE_CLASSES.length, '["1k", "2k"]'),
    qualities: z.array(z.enum(QUALITIES, `must be one of ${QUALITIES.join(', ')}`), 'must be a list such as ["low", "high"]').max(3, 'must hold at most 3 values').optional(),
    max_n: int(1, 10).optional(),
    transparent: flag,
    max_references: int(0, 16).optional(),
    max_edit_images: int(0, 16).optional(),
    mask: flag,
    seed: flag,
    negative_prompt: flag,
    negative_prompt_with_images: flag,
    image_reference: flag,
    image_fidelity: flag,
    partials: flag,
    max_prompt_chars: int(1, 32_000, 'a whole number of characters').optional(),
  })
  .superRefine((s, ctx) => {
    const fault = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    if (s.size_rule && s.sizes !== 'any') fault(['size_rule'], 'bounds a free size: only with sizes "any"');
    if (s.size_rule && s.size_rule.min_side > s.size_rule.max_side) fault(['size_rule', 'min_side'], `must be at most max_side (${s.size_rule.max_side})`);
    if (s.mask && !s.max_edit_images) fault(['mask'], 'needs max_edit_images above 0 (a mask goes with an edit)');
    if (s.negative_prompt_with_images !== undefined && !s.negative_prompt) fault(['negative_prompt_with_images'], 'needs negative_prompt: true');
  });

/** A vendor's voice id (OpenAI's `alloy`, an ElevenLabs id), as a channel's voices map them (1 to 128 characters). */
const voiceId = z.string('must be a voice id, such as "alloy"').min(1, 'must be a voice id, such as "alloy"').max(128, 'must be a voice id of at most 128 characters');
const speedBound = z.number('must be a number from 0.25 to 4').min(0.25, 'must be a number from 0.25 to 4').max(4, 'must be a number from 0.25 to 4');

const speechSchema = z
  .strictObject({
    // its own voices by the vendor's ids, each a voice name callers use too (a channel's voices add names)
    voices: list(voiceId, 200, '["alloy", "nova"]').optional(),
    voice_ids: flag,
    max_input_chars: int(1, SPEECH_MAX_INPUT, 'a whole number of characters').optional(),
    instructions: flag,
    speed: z.strictObject({ min: speedBound, max: speedBound }, 'must be {"min": …, "max": …}, the speeds it takes (0.25 to 4), or left out: 1 only').optional(),
  })
  .superRefine((s, ctx) => {
    const fault = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    if (!s.voices && !s.voice_ids) fault([], 'says of no voice the model speaks: list its voices, or set voice_ids (it takes any voice id of its vendor)');
    if (s.speed && (s.speed.min > 1 || s.speed.max < 1)) fault(['speed'], `must take 1 (the speed a request that asks none is made at): min at most 1, max at least 1 (not ${s.speed.min} to ${s.speed.max})`);
  });

export type DeclaredVideoSpec = z.infer<typeof videoSchema>;
export type DeclaredSpeechSpec = z.infer<typeof speechSchema>;
export type DeclaredImageSpec = z.infer<typeof imageSchema>;

/** The video fields of a declared spec, by VideoModelSpec's name: what `declaredVideoSpec` maps. */
const VIDEO_CAPABILITIES = {
  lastFrame: 'last_frame',
  continues: 'continues',
  loop: 'loop',
  seed: 'seed',
  audio: 'audio',
  negativePrompt: 'negative_prompt',
  concepts: 'concepts',
  cfgScale: 'cfg_scale',
  cameraControl: 'camera_control',
} as const satisfies Partial<Record<keyof VideoModelSpec, keyof DeclaredVideoSpec>>;

const IMAGE_CAPABILITIES = {
  transparent: 'transparent',
  mask: 'mask',
  seed: 'seed',
  negativePrompt: 'negative_prompt',
  imageReference: 'image_reference',
  imageFidelity: 'image_fidelity',
  partials: 'partials',
} as const satisfies Partial<Record<keyof ImageModelSpec, keyof DeclaredImageSpec>>;

/**
 * Checks a declared video spec (`field`: where it is in the request, `models[0].spec`) and returns it as a
 * `VideoModelSpec` of `id`. `catalog`: the protocol's catalog models, which say what its adapter sends: a
 * capability none of them has (Seedance's `loop`) is one the adapter has no words for, so declaring it is
 * refused rather than left for the adapter to drop.
 */
export function declaredVideoSpec(id: string, spec: unknown, field: string, protocol: string, catalog: readonly VideoModelSpec[]): VideoModelSpec {
  const s = parse(videoSchema, spec, field, 'video');
  for (const [key, name] of Object.entries(VIDEO_CAPABILITIES) as [keyof typeof VIDEO_CAPABILITIES, string][]) {
    if (s[name as keyof DeclaredVideoSpec] === true && !catalog.some((m) => m[key])) throw unsent(field, name, protocol);
  }
  if ((s.reference_images ?? 0) > 0 && !catalog.some((m) => (m.referenceImages ?? 0) > 0)) throw unsent(field, 'reference_images', protocol);
  return videoSpecOf(id, s);
}

/** A declared video spec as stored (checked when it was written) as the `VideoModelSpec` routing reads. */
export function videoSpecOf(id: string, s: DeclaredVideoSpec): VideoModelSpec {
  return {
    id,
    durations: s.durations,
    aspectRatios: s.aspect_ratios,
    resolutions: s.resolutions,
    ...(s.durations_at ? { durationsAt: s.durations_at as Record<string, number[]> } : {}),
    ...(s.sizes ? { sizes: s.sizes } : {}),
    textToVideo: s.text_to_video === true,
    firstFrame: s.first_frame === true,
    lastFrame: s.last_frame === true,
    lastFrameAlone: s.last_frame_alone === true,
    continues: s.continues === true,
    loop: s.loop === true,
    seed: s.seed === true,
    audio: s.audio === true,
    negativePrompt: s.negative_prompt === true,
    concepts: s.concepts === true,
    cfgScale: s.cfg_scale === true,
    cameraControl: s.camera_control === true,
    maxPromptChars: s.max_prompt_chars ?? DEFAULT_PROMPT_CHARS,
    shapeFromImage: s.shape_from_image === true,
    ...(s.last_frame_resolution ? { lastFrameResolution: s.last_frame_resolution } : {}),
    referenceImages: s.reference_images ?? 0,
    referencesWithFrames: s.references_with_frames === true,
    ...(s.frame_min_side ? { frameMinSide: s.frame_min_side } : {}),
    // stated always (the operator's, else the lists' first), so the vendor is sent what the task is priced at
    // (sentDurationS): the gateway cannot know a declared model's own defaults
    defaultDurationS: s.default_duration_s ?? s.durations[0],
    defaultResolution: s.default_resolution ?? s.resolutions[0],
  };
}

/** Checks a declared image spec and returns it as an `ImageModelSpec` of `id` (as declaredVideoSpec). */
export function declaredImageSpec(id: string, spec: unknown, field: string, protocol: string, catalog: readonly ImageModelSpec[]): ImageModelSpec {
  const s = parse(imageSchema, spec, field, 'image');
  for (const [key, name] of Object.entries(IMAGE_CAPABILITIES) as [keyof typeof IMAGE_CAPABILITIES, string][]) {
    if (s[name as keyof DeclaredImageSpec] === true && !catalog.some((m) => m[key])) throw unsent(field, name, protocol);
  }
  if ((s.qualities?.length ?? 0) > 0 && !catalog.some((m) => m.qualities.length > 0)) throw unsent(field, 'qualities', protocol);
  if ((s.max_references ?? 0) > 0 && !catalog.some((m) => m.maxReferences > 0)) throw unsent(field, 'max_references', protocol);
  if ((s.max_edit_images ?? 0) > 0 && !catalog.some((m) => m.maxEditImages > 0)) throw unsent(field, 'max_edit_images', protocol);
  return imageSpecOf(id, s);
}

/** A declared image spec as stored as the `ImageModelSpec` routing reads. */
export function imageSpecOf(id: string, s: DeclaredImageSpec): ImageModelSpec {
  return {
    id,
    ...(s.sizes ? { sizes: s.sizes } : {}),
    ...(s.size_rule ? { sizeRule: { multipleOf: s.size_rule.multiple_of, minSide: s.size_rule.min_side, maxSide: s.size_rule.max_side, maxPixels: s.size_rule.max_pixels } } : {}),
    aspectRatios: s.aspect_ratios,
    resolutions: s.resolutions,
    qualities: s.qualities ?? [],
    maxN: s.max_n ?? 1,
    transparent: s.transparent === true,
    maxReferences: s.max_references ?? 0,
    maxEditImages: s.max_edit_images ?? 0,
    mask: s.mask === true,
    seed: s.seed === true,
    negativePrompt: s.negative_prompt === true,
    ...(s.negative_prompt_with_images !== undefined ? { negativePromptWithImages: s.negative_prompt_with_images } : {}),
    imageReference: s.image_reference === true,
    imageFidelity: s.image_fidelity === true,
    partials: s.partials === true,
    maxPromptChars: s.max_prompt_chars ?? DEFAULT_PROMPT_CHARS,
  };
}

/**
 * Checks a declared speech spec and returns it as a `SpeechModelSpec` of `id` (as declaredVideoSpec): taking
 * instructions, any voice id or speeds other than 1 only where a catalog model of the protocol does (its
 * adapter sends them).
 */
export function declaredSpeechSpec(id: string, spec: unknown, field: string, protocol: string, catalog: readonly SpeechModelSpec[]): SpeechModelSpec {
  const s = parse(speechSchema, spec, field, 'speech');
  if (s.instructions && !catalog.some((m) => m.instructions)) throw unsent(field, 'instructions', protocol);
  if (s.voice_ids && !catalog.some((m) => m.voiceIds)) throw unsent(field, 'voice_ids', protocol);
  if (s.speed && !catalog.some((m) => m.speed)) throw unsent(field, 'speed', protocol);
  return speechSpecOf(id, s);
}

/** A declared speech spec as stored as the `SpeechModelSpec` routing reads. */
export function speechSpecOf(id: string, s: DeclaredSpeechSpec): SpeechModelSpec {
  return {
    id,
    voices: Object.fromEntries((s.voices ?? []).map((v) => [v, v])),
    voiceIds: s.voice_ids === true,
    maxInput: s.max_input_chars ?? SPEECH_MAX_INPUT,
    instructions: s.instructions === true,
    speed: s.speed ?? null,
  };
}

export function storedSpeechSpec(id: string, spec: unknown): SpeechModelSpec | undefined {
  const parsed = speechSchema.safeParse(spec);
  return parsed.success ? speechSpecOf(id, parsed.data) : undefined;
}

/** A stored declared spec, read back (it was checked when written; a spec that no longer parses serves nothing). */
export function storedVideoSpec(id: string, spec: unknown): VideoModelSpec | undefined {
  const parsed = videoSchema.safeParse(spec);
  return parsed.success ? videoSpecOf(id, parsed.data) : undefined;
}

export function storedImageSpec(id: string, spec: unknown): ImageModelSpec | undefined {
  const parsed = imageSchema.safeParse(spec);
  return parsed.success ? imageSpecOf(id, parsed.data) : undefined;
}

function unsent(field: string, name: string, protocol: string): AppError {
  return new AppError('INVALID_PARAMETER', `${field}.${name}: the ${protocol} adapter has no words for it (no ${protocol} model the gateway knows takes it), so a request asking it could not be sent as asked`);
}

const SCHEMAS: Record<DeclarableOperation, { shape: object }> = { video: videoSchema, image: imageSchema, speech: speechSchema };

/** The operations whose channels may declare models (each with its schema above, its check and its stored reader). */
export const DECLARABLE_OPERATIONS = ['video', 'image', 'speech'] as const;
export type DeclarableOperation = (typeof DECLARABLE_OPERATIONS)[number];

/** The spec parsed, or a 400 naming the first field it refuses (and how many more there are). */
function parse<T>(schema: z.ZodType<T>, spec: unknown, field: string, operation: DeclarableOperation): T {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new AppError('INVALID_PARAMETER', `${field} must be an object: what the ${operation} model can do (docs/operators/channels.md, "Declared models")`);
  const parsed = schema.safeParse(spec);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const words = issues.slice(0, 3).map((issue) => {
    if (issue.code === 'unrecognized_keys') return `${pathOf(field, issue.path)} has no field ${issue.keys.join(', ')} (${withArticle(operation)} spec's fields: ${Object.keys(SCHEMAS[operation].shape).join(', ')})`;
    if (issue.code === 'invalid_type' && valueAt(spec, issue.path) === undefined) return `${pathOf(field, issue.path)} is required: it ${issue.message}`;
    const value = valueAt(spec, issue.path);
    // a rule of the spec as a whole says what it found itself
    const shown = issue.code === 'custom' || value === undefined || typeof value === 'object' ? '' : ` (not ${JSON.stringify(value)})`;
    return `${pathOf(field, issue.path)} ${issue.message}${shown}`;
  });
  const more = issues.length > 3 ? `; and ${issues.length - 3} more` : '';
  throw new AppError('INVALID_PARAMETER', words.join('; ') + more);
}

function pathOf(field: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((at, key) => (typeof key === 'number' ? `${at}[${key}]` : `${at}.${String(key)}`), field);
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined), value);
}

/** The declared specs as OpenAPI 3.0 schemas (the admin API's document describes `models[].spec` with them). */
export const DECLARED_VIDEO_SPEC_SCHEMA = openApiSchema('DeclaredVideoSpec', videoSchema);
export const DECLARED_IMAGE_SPEC_SCHEMA = openApiSchema('DeclaredImageSpec', imageSchema);
export const DECLARED_SPEECH_SPEC_SCHEMA = openApiSchema('DeclaredSpeechSpec', speechSchema);

/** A schema as plain OpenAPI 3.0 JSON (zod's own keys left out), typed as @nestjs/swagger takes it. */
function openApiSchema(title: string, schema: z.ZodType): Record<string, never> {
  return { title, ...JSON.parse(JSON.stringify(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }))) } as Record<string, never>;
}
