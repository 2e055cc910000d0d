import { registerDecorator, type ValidationArguments } from 'class-validator';
import { checkImageInput, imageFromDecoded, type ImageInput, parseImageField } from '../kling-image-input.js';
import { type BodyWithDecoded, DECODED, DECODED_MARKER } from '../../../common/http/base64-field-reader.js';
import { ImageRuleError } from '../../../modules/expand/image-rules.js';

/** What the `image` field holds after class-transformer: the parsed input, or the rule it broke. */
export type ImageField = ImageInput | InvalidImage;

export class InvalidImage {
  constructor(readonly problem: string) {}
}

/** class-transformer step for `image`: parse (and decode Base64) once. */
export function toImageField({ value, obj }: { value: unknown; obj: BodyWithDecoded }): ImageField {
  try {
    // a large body was read with its Base64 decoded as it streamed in (StreamedBase64Field)
    const decoded = value === DECODED_MARKER ? obj[DECODED] : undefined;
    return decoded ? imageFromDecoded(decoded) : parseImageField(value);
  } catch (err) {
    if (err instanceof ImageRuleError) return new InvalidImage(err.message);
    throw err;
  }
}

/** Checks the parsed image against every rule of the spec (size, JPEG/PNG, dimensions, aspect ratio). */
export function IsExpandImage(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isExpandImage',
      target: target.constructor,
      propertyName: propertyName as string,
      async: true,
      validator: {
        async validate(value: unknown): Promise<boolean> {
          if (value === undefined) return false;
          if (value instanceof InvalidImage) return false;
          try {
            await checkImageInput(value as ImageInput);
            return true;
          } catch (err) {
            if (!(err instanceof ImageRuleError)) throw err;
            (value as { problem?: string }).problem = err.message;
            return false;
          }
        },
        defaultMessage: (args?: ValidationArguments) =>
          (args?.value as { problem?: string } | undefined)?.problem ?? 'image is required: an http(s) URL, or the Base64 of a JPEG or PNG file',
      },
    });
}

export const RATIO_MIN = 0;
export const RATIO_MAX = 2;
/** Room for float rounding: an area of exactly 3 passes, 3.0000001 does too, 3.01 does not. */
export const AREA_TOLERANCE = 1e-9;
export const MAX_AREA_FACTOR = 3;

function ratioProblem(property: string, value: unknown): string | null {
  if (value === undefined || value === null) return `${property} is required`;
  if (typeof value !== 'number' || !Number.isFinite(value)) return `${property} must be a number between ${RATIO_MIN} and ${RATIO_MAX}`;
  if (value < RATIO_MIN || value > RATIO_MAX) return `${property} must be between ${RATIO_MIN} and ${RATIO_MAX} (got ${value})`;
  return null;
}

/**
 * One expansion ratio: a number in [0, 2]. With `alias`, the field may be given under that other
 * name instead (bottom_expansion_ratio / down_expansion_ratio); giving both with different values is refused.
 */
export function IsExpansionRatio(options: { alias?: string; optional?: boolean } = {}): PropertyDecorator {
  return (target, propertyName) => {
    const property = propertyName as string;
    const problem = (args: ValidationArguments): string | null => {
      const object = args.object as Record<string, unknown>;
      const value = object[property];
      const aliasValue = options.alias ? object[options.alias] : undefined;
      if (options.optional && value === undefined) return null;
      if (options.alias && value === undefined && aliasValue !== undefined) return null; // the alias carries it
      if (options.alias && value === undefined) return `${property} is required (${options.alias} is accepted as another name for it)`;
      const own = ratioProblem(property, value);
      if (own) return own;
      if (options.alias && aliasValue !== undefined && aliasValue !== value) {
        return `${property} and ${options.alias} name the same ratio but differ (${String(value)} and ${String(aliasValue)}); send one of them`;
      }
      return null;
    };
    registerDecorator({
      name: 'isExpansionRatio',
      target: target.constructor,
      propertyName: property,
      validator: { validate: (_: unknown, args?: ValidationArguments) => problem(args!) === null, defaultMessage: (args?: ValidationArguments) => problem(args!) ?? '' },
    });
  };
}

/** The new image, (1 + up + bottom) x (1 + left + right) times the original, may be at most 3 times as large. */
export function ExpandedAreaAtMost3(): PropertyDecorator {
  const areaOf = (o: Record<string, unknown>): number | null => {
    const bottom = o.bottom_expansion_ratio ?? o.down_expansion_ratio;
    const values = [o.up_expansion_ratio, bottom, o.left_expansion_ratio, o.right_expansion_ratio];
    if (!values.every((v) => typeof v === 'number' && v >= RATIO_MIN && v <= RATIO_MAX)) return null; // reported by each field
    const [up, down, left, right] = values as number[];
    return (1 + up + down) * (1 + left + right);
  };
  return (target, propertyName) =>
    registerDecorator({
      name: 'expandedAreaAtMost3',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (_: unknown, args?: ValidationArguments) => {
          const area = areaOf(args!.object as Record<string, unknown>);
          return area === null || area <= MAX_AREA_FACTOR + AREA_TOLERANCE;
        },
        defaultMessage: (args?: ValidationArguments) =>
          `the expanded image may be at most ${MAX_AREA_FACTOR} times the original area: (1 + up + bottom) x (1 + left + right) is ${areaOf(args!.object as Record<string, unknown>)?.toFixed(4)}`,
      },
    });
}

/** n: how many images, 1 to 9, as the spec's string ("1".."9") or as a JSON number. */
export function IsImageCount(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isImageCount',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => parseImageCount(value) !== null,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} must be a whole number from 1 to 9, as a number or a string ("1".."9"); got ${JSON.stringify(args?.value)}`,
      },
    });
}

/** The count, 1 when absent (undefined or null, as for every optional field); null when invalid. */
export function parseImageCount(value: unknown): number | null {
  if (value === undefined || value === null) return 1;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 9) return value;
  if (typeof value === 'string' && /^[1-9]$/.test(value)) return Number(value);
  return null;
}
