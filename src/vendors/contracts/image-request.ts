/**
 * An image generation or edit as every door asks for it and every vendor adapter reads it: what the caller
 * asked, in one vocabulary. A door maps its body into it (OpenAI's Images API, Kling's image API); an adapter
 * maps it out into its vendor's request. A field left undefined was not asked for (the vendor's default applies).
 */
export interface ImageRequest {
  /** `generate`: from the prompt (and reference images, if any); `edit`: the input images changed as the prompt says (a mask marks where). */
  mode: 'generate' | 'edit';
  prompt: string;
  negativePrompt?: string;
  /** How many images (1 to 10). */
  n: number;
  /** An exact pixel size, `<w>x<h>` (OpenAI's `size`): the stored images have it. */
  size?: string;
  /** `<w>:<h>`: asked (Kling's `aspect_ratio`), or an asked size's shape. */
  aspectRatio?: string;
  /** The images' class by their longer side: `1k`, `2k` or `4k` (IMAGE_RESOLUTIONS). */
  resolution?: string;
  quality?: 'low' | 'medium' | 'high';
  background?: 'transparent' | 'opaque';
  /** The stored images' format (the gateway converts a vendor's PNG or JPEG into it). */
  outputFormat: 'png' | 'jpeg' | 'webp';
  /** 0-100, for jpeg and webp. */
  outputCompression?: number;
  seed?: number;
  /** How many input images come with it: reference images of a generation, or the images an edit changes. */
  images: number;
  /** An edit's mask (transparent where the first image is to change). */
  mask: boolean;
  /** Kling's reference kind for its input image (`subject` or `face`). */
  imageReference?: 'subject' | 'face';
  /** Kling's reference strength (0-1). */
  imageFidelity?: number;
  /** Kling's subject-reference strength (0-1). */
  humanFidelity?: number;
  /** The model's name as callers use it; undefined: any model that can do the rest. */
  model?: string;
}

/** What a request asks for, by the normalized field a model must honour. */
export const IMAGE_FIELDS = ['model', 'mode', 'prompt', 'negativePrompt', 'n', 'size', 'aspectRatio', 'resolution', 'quality', 'background', 'seed', 'images', 'mask', 'imageReference', 'imageFidelity', 'humanFidelity'] as const;
export type ImageField = (typeof IMAGE_FIELDS)[number];

/** The resolution classes of an image, by its longer side (at most this many pixels). */
export const IMAGE_RESOLUTIONS: Readonly<Record<string, number>> = { '1k': 1536, '2k': 2880, '4k': 4096 };

/** What one vendor model can do. A field it lacks is refused (never dropped). */
export interface ImageModelSpec {
  /** The vendor's id of the model. */
  id: string;
  /**
   * The exact sizes it makes (`1024x1024`), or `any` within `sizeRule`; absent: it makes aspect ratios at
   * sizes of its own (the gateway resizes its images to an asked exact size of one of them).
   */
  sizes?: readonly string[] | 'any';
  /** The bounds of a free size (`sizes: 'any'`). */
  sizeRule?: { multipleOf: number; minSide: number; maxSide: number; maxPixels: number };
  /** The shapes it makes (`<w>:<h>`). */
  aspectRatios: readonly string[];
  /** The resolution classes it makes (`1k`, `2k`, `4k`). */
  resolutions: readonly string[];
  /** The qualities it takes (OpenAI's low, medium, high); empty: none. */
  qualities: readonly string[];
  /** Images per task (the adapter makes them in one call or several). */
  maxN: number;
  /** A transparent background. */
  transparent: boolean;
  /** Reference images with a generation, at most (0: none). */
  maxReferences: number;
  /** It edits images (changes the inputs as the prompt says), at most this many at once (0: no edits). */
  maxEditImages: number;
  /** An edit with a mask. */
  mask: boolean;
  seed: boolean;
  negativePrompt: boolean;
  /** A negative prompt together with input images (false: Kling's image-to-image takes none). */
  negativePromptWithImages?: boolean;
  /** Kling's image_reference (subject or face) and its fidelities. */
  imageReference?: boolean;
  imageFidelity?: boolean;
  /** It streams partial images while it works (OpenAI's partial_images). */
  partials?: boolean;
  maxPromptChars: number;
}

/** The width and height of a `<w>x<h>` size. */
export function sidesOf(size: string): { width: number; height: number } {
  const [width, height] = size.split('x').map(Number);
  return { width, height };
}

/** A size's shape as one of `ratios` (within 2 %: 1536x1024 is 3:2, 1344x768 is 16:9), or its reduced ratio. */
export function shapeOf(width: number, height: number, ratios: readonly string[] = COMMON_IMAGE_RATIOS): string {
  const near = ratios.find((r) => {
    const [w, h] = r.split(':').map(Number);
    return Math.abs(width / height / (w / h) - 1) < 0.02;
  });
  if (near) return near;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = gcd(width, height);
  return `${width / g}:${height / g}`;
}

/** The shapes sizes are read as first. */
export const COMMON_IMAGE_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3', '21:9', '9:21', '5:4', '4:5'] as const;

/** A size's resolution class: the smallest whose longer side holds it. */
export function resolutionOf(width: number, height: number): string {
  const side = Math.max(width, height);
  return Object.entries(IMAGE_RESOLUTIONS).find(([, max]) => side <= max)?.[0] ?? '4k';
}

/** Whether a model makes this exact size (listed, within its rule, or by its shape and class, resized). */
export function makesSize(spec: ImageModelSpec, size: string): boolean {
  const { width, height } = sidesOf(size);
  if (Array.isArray(spec.sizes)) return spec.sizes.includes(size);
  if (spec.sizes === 'any') {
    const rule = spec.sizeRule;
    return !rule || (width % rule.multipleOf === 0 && height % rule.multipleOf === 0 && Math.min(width, height) >= rule.minSide && Math.max(width, height) <= rule.maxSide && width * height <= rule.maxPixels);
  }
  return spec.aspectRatios.includes(shapeOf(width, height, spec.aspectRatios)) && spec.resolutions.includes(resolutionOf(width, height));
}

/** The fields of `request` this model cannot honour (empty: it can make exactly what was asked). */
export function unmetImageFields(spec: ImageModelSpec, request: ImageRequest): ImageField[] {
  const unmet: ImageField[] = [];
  if ([...request.prompt].length > spec.maxPromptChars) unmet.push('prompt');
  if (request.mode === 'edit' && spec.maxEditImages === 0) unmet.push('mode');
  if (request.n > spec.maxN) unmet.push('n');
  if (request.size !== undefined && !makesSize(spec, request.size)) unmet.push('size');
  if (request.size === undefined && request.aspectRatio !== undefined && !spec.aspectRatios.includes(request.aspectRatio)) unmet.push('aspectRatio');
  if (request.size === undefined && request.resolution !== undefined && !spec.resolutions.includes(request.resolution)) unmet.push('resolution');
  if (request.quality !== undefined && !spec.qualities.includes(request.quality)) unmet.push('quality');
  if (request.background === 'transparent' && !spec.transparent) unmet.push('background');
  if (request.seed !== undefined && !spec.seed) unmet.push('seed');
  if (request.negativePrompt !== undefined && (!spec.negativePrompt || (request.images > 0 && spec.negativePromptWithImages === false))) unmet.push('negativePrompt');
  const maxImages = request.mode === 'edit' ? spec.maxEditImages : spec.maxReferences;
  if (request.images > maxImages && !(request.mode === 'edit' && spec.maxEditImages === 0)) unmet.push('images');
  if (request.mask && !spec.mask) unmet.push('mask');
  if (request.imageReference !== undefined && !spec.imageReference) unmet.push('imageReference');
  if ((request.imageFidelity !== undefined || request.humanFidelity !== undefined) && !spec.imageFidelity) unmet.push(request.imageFidelity !== undefined ? 'imageFidelity' : 'humanFidelity');
  return [...new Set(unmet)];
}

/** A model that can do everything a request may ask (the sandbox renders every field). */
export function everyImage(id: string): ImageModelSpec {
  return {
    id,
    sizes: 'any',
    sizeRule: { multipleOf: 1, minSide: 16, maxSide: 4096, maxPixels: 4096 * 4096 },
    aspectRatios: [...COMMON_IMAGE_RATIOS],
    resolutions: Object.keys(IMAGE_RESOLUTIONS),
    qualities: ['low', 'medium', 'high'],
    maxN: 10,
    transparent: true,
    maxReferences: 16,
    maxEditImages: 16,
    mask: true,
    seed: true,
    negativePrompt: true,
    imageReference: true,
    imageFidelity: true,
    partials: true,
    maxPromptChars: 32_000,
  };
}
