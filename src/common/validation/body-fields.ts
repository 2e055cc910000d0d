const NULL_AS_ABSENT = Symbol('nullAsAbsent');
const REFUSES_UNKNOWN = Symbol('refusesUnknownFields');
const MULTIPART_BODY = Symbol('multipartBody');

/** Marks a body read from multipart/form-data (its repeated parts are lists: AppValidationPipe refuses them by the DTO). */
export function markMultipart(body: object): void {
  Object.defineProperty(body, MULTIPART_BODY, { value: true, enumerable: false });
}

/** Whether the body was read from multipart/form-data (markMultipart). */
export function isMultipartBody(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MULTIPART_BODY] === true;
}

/**
 * A request body whose top-level `null` means the field left out (shared.md: "null in an optional field means
 * the same as leaving it out"), as the providers' APIs read it (OpenAI's, pydantic's optional fields at
 * ElevenLabs): clients that serialize every optional field send them. AppValidationPipe drops such fields before
 * the DTO's rules, so a door's code sees absent, never null. Not for bodies where null says something
 * (the admin API's PATCH, where it clears a setting).
 */
export function NullAsAbsent(): ClassDecorator {
  return (target) => Reflect.defineMetadata(NULL_AS_ABSENT, true, target);
}

/** Whether a body of this class reads null as absent (the decorator on it or on a class it extends). */
export function readsNullAsAbsent(metatype: object): boolean {
  return Reflect.getMetadata(NULL_AS_ABSENT, metatype) === true;
}

/**
 * The body without its fields whose value is null: the same object, changed in place (what a streamed body's
 * reader decoded is found by the body object itself: Base64FieldReader).
 */
export function withoutNulls<T extends object>(body: T): T {
  for (const [key, value] of Object.entries(body)) if (value === null) delete (body as Record<string, unknown>)[key];
  return body;
}

/**
 * A request body whose unknown fields are refused (400 naming each, nested ones by their path), not dropped:
 * the admin API's, where a misspelt field (`priorty`, `prise`) silently left out would leave a channel taking
 * traffic unpriced or at the wrong priority. The doors drop unknown fields, as their providers' clients expect
 * of them (an SDK newer than the door may send a field it does not know).
 */
export function RefusesUnknownFields(): ClassDecorator {
  return (target) => Reflect.defineMetadata(REFUSES_UNKNOWN, true, target);
}

/** Whether a body of this class refuses its unknown fields. */
export function refusesUnknownFields(metatype: object): boolean {
  return Reflect.getMetadata(REFUSES_UNKNOWN, metatype) === true;
}
