import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

export const MAX_URL_LENGTH = 2048;

const OUTSIDE_STANDARD = /[^A-Za-z0-9+/]/;
/** A character in neither Base64 alphabet (standard or URL-safe). */
export const OUTSIDE_BASE64 = /[^A-Za-z0-9+/_-]/;

/**
 * Whether `value` is Base64 text: characters of the alphabet (the standard one, or with `urlSafe` the URL-safe
 * one as well), then at most two '='. No `^[…]+={0,2}$` pattern: V8 can match that over a string of megabytes
 * with a backtrack stack that overflows ("Maximum call stack size exceeded", a 500 the fuzzer met under load
 * on a 5 MB image); the search for one character outside the alphabet keeps no such stack.
 */
export function isBase64Text(value: string, options: { urlSafe?: boolean; allowEmpty?: boolean } = {}): boolean {
  const end = value.endsWith('==') ? value.length - 2 : value.endsWith('=') ? value.length - 1 : value.length;
  if (end === 0) return options.allowEmpty === true;
  return !(options.urlSafe ? OUTSIDE_BASE64 : OUTSIDE_STANDARD).test(end === value.length ? value : value.slice(0, end));
}

/** True for an absolute http(s) URL with a host, at most MAX_URL_LENGTH characters. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** `<field> must be an http or https URL`. */
export function IsHttpUrl(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isHttpUrl',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => isHttpUrl(value),
        defaultMessage: (args?: ValidationArguments) =>
          args?.value === undefined || args.value === null
            ? `${args?.property} is required: an http or https URL`
            : typeof args.value === 'string' && args.value.length > MAX_URL_LENGTH
              ? `${args.property} must be at most ${MAX_URL_LENGTH} characters long`
              : `${args.property} must be an http or https URL`,
      },
    });
}

/** Counts characters as a person does (code points), not UTF-16 units. */
export function MaxChars(max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'maxChars',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && [...value].length <= max,
        defaultMessage: (args?: ValidationArguments) =>
          typeof args?.value === 'string'
            ? `${args.property} must be at most ${max} characters long (got ${[...args.value].length})`
            : `${args?.property} must be a string`,
      },
    });
}

/** An empty string means the field is absent, as in Kling's documented bodies (`"callback_url": ""`). */
export function EmptyAsAbsent(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value));
}

/**
 * A query's whole number as written in decimal digits (a minus allowed): "16" is 16, while "0x10", "1e1",
 * " 5" and "" stay as they came, for the number's own rule to refuse. (class-transformer's Number() would read
 * each of them as a number.)
 */
export function QueryInteger(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? Number(value) : value));
}
