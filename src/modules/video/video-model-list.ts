import type { ModelListDto } from './dto/model.dto.js';
import type { OfferedModel } from './video-models.js';

/** The models callers may ask for (GET /models): what each makes, in the API's words, and its price per second. */
export function modelList(offered: OfferedModel[], creditsPerSecond: number): ModelListDto {
  const models = offered.map(({ name, vendor, spec, declared }) => ({
    name,
    operation: 'video' as const,
    vendor,
    vendor_model: spec.id,
    declared: declared === true,
    durations_s: [...spec.durations],
    aspect_ratios: spec.aspectRatios === 'any' ? ['any'] : [...spec.aspectRatios],
    resolutions: [...spec.resolutions],
    ...(spec.sizes ? { sizes: [...spec.sizes] } : {}),
    text_to_video: spec.textToVideo,
    first_frame: spec.firstFrame,
    last_frame: spec.lastFrame,
    continues: spec.continues,
    loop: spec.loop,
    seed: spec.seed,
    audio: spec.audio,
    negative_prompt: spec.negativePrompt,
    concepts: spec.concepts,
    cfg_scale: spec.cfgScale === true,
    camera_control: spec.cameraControl === true,
    max_prompt_chars: spec.maxPromptChars,
    reference_images: spec.referenceImages ?? 0,
    references_with_frames: spec.referencesWithFrames === true,
    shape_from_first_frame: spec.shapeFromImage === true,
    credits_per_second: creditsPerSecond,
  }));
  return { models };
}
