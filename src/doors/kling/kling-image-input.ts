import type { DecodedBase64 } from '../../common/http/base64-field-reader.js';
import { isBase64Text, isHttpUrl } from '../../common/validation/validators.js';
import { assertSize, type ImageFacts, ImageRuleError, inspectImage } from '../../modules/expand/image-rules.js';

/** A 10 MB image is about 13.4 MB as Base64; 20 MB leaves room, so an image just over 10 MB gets the 10 MB message, not 413 (every Kling route that takes Base64 images). */
export const KLING_BODY_LIMIT_BYTES = 20 * 1024 * 1024;

/**
 * Kling's `image` field after parsing: a URL (checked for form only; fetched when the task runs) or Base64
 * decoded once into bytes. `original` is the string as sent, echoed in the reply without a copy; a
 * large body's image was decoded while it streamed in, and has no `original` (the reply encodes the bytes).
 */
export type ImageInput =
  | { kind: 'url'; original: string; url: string }
  | { kind: 'base64'; original?: string; bytes: Buffer; facts?: ImageFacts };

/** Turns the raw field into an ImageInput, or throws ImageRuleError naming the rule it breaks. */
export function parseImageField(value: unknown): ImageInput {
  if (value === undefined || value === null || value === '') {
    throw new ImageRuleError('image is required: an http(s) URL, or the Base64 of a JPEG or PNG file');
  }
  if (typeof value !== 'string') {
    throw new ImageRuleError('image must be a string: an http(s) URL, or the Base64 of a JPEG or PNG file');
  }
  if (/^data:/i.test(value)) {
    const header = value.slice(0, value.indexOf(',') + 1 || 40);
    throw new ImageRuleError(`image must be bare Base64 without a "data:" prefix: remove "${header}" and send the rest`);
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    if (!isHttpUrl(value)) {
      throw new ImageRuleError('image must be an http or https URL when it is a URL');
    }
    return { kind: 'url', original: value, url: value };
  }
  const compact = /\s/.test(value) ? value.replace(/\s+/g, '') : value;
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  assertSize(Math.floor((compact.length * 3) / 4) - padding); // before decoding anything
  if (!isBase64Text(compact, { urlSafe: true, allowEmpty: true }) || (padding > 0 && compact.length % 4 !== 0)) {
    throw new ImageRuleError('image must be an http(s) URL or Base64 (standard or URL-safe alphabet) of a JPEG or PNG file');
  }
  return { kind: 'base64', original: value, bytes: Buffer.from(compact, 'base64') };
}

/** The image of a body whose Base64 was decoded while it streamed in (see Base64FieldReader). */
export function imageFromDecoded(decoded: DecodedBase64): ImageInput {
  if (decoded.problem) throw new ImageRuleError(decoded.problem);
  assertSize(decoded.decodedLength);
  return { kind: 'base64', bytes: decoded.bytes };
}

/** Applies the image rules to decoded bytes and records what was read. */
export async function checkImageInput(input: ImageInput): Promise<void> {
  if (input.kind === 'base64') {
    input.facts = inspectImage(input.bytes);
  }
}
