import type { ImageModelSpec, ImageRequest } from '../../../src/vendors/contracts/image-request.js';
import type { ImageInput } from '../../../src/vendors/contracts/image-vendor.js';

/** A normalized image request: a 1-image PNG generation of the prompt unless `over` says otherwise. */
export function imageRequest(over: Partial<ImageRequest> = {}): ImageRequest {
  return { mode: 'generate', prompt: 'A lighthouse at dusk', n: 1, outputFormat: 'png', images: 0, mask: false, ...over };
}

/** An input image as an adapter is handed it: bytes that say what they stand for (no adapter decodes them). */
export function imageInput(width: number, height: number, format: ImageInput['format'] = 'png'): ImageInput {
  return { bytes: Buffer.from(`${format} ${width}x${height}`), format, width, height };
}

/** A catalog's model by its id (a test of a model the catalog no longer has fails here, by name). */
export function modelOf(models: readonly ImageModelSpec[], id: string): ImageModelSpec {
  const model = models.find((m) => m.id === id);
  if (!model) throw new Error(`no model ${id} in the catalog`);
  return model;
}

/** Base64 of a text, as vendors' JSON carries image bytes. */
export function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}
