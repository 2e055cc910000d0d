import type { ParamFault } from './app-error.js';
import type { WireError } from './error-catalog.js';

/** The field a message names first (`music_length_ms must …`, `composition_plan.sections.0.lines: …`). */
const NAMED_FIELD = /^([a-z_][a-z0-9_]*(?:\[[a-z0-9_]+\]|\.[a-z0-9_]+)*)(?=:| must | is )/;

/** One item of a 422's `detail`, as ElevenLabs' API (FastAPI) words a refused field. */
export interface ElevenLabsValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
}

/** ElevenLabs' answer to a request it refuses or could not serve: a 422's list, or `{status, message}`. */
export type ElevenLabsErrorBody = { detail: ElevenLabsValidationItem[] } | { detail: { status: string; message: string } };

/** ElevenLabs' `detail.status` for the catalog's names where its own word differs (its docs' error list). */
const STATUS_WORDS: Record<string, string> = {
  unauthorized: 'invalid_api_key',
  moderation_blocked: 'bad_prompt',
  resource_pack_exhausted: 'quota_exceeded',
  concurrency_limited: 'too_many_concurrent_requests',
};

/** The rule a refused field broke, as pydantic types it. */
const RULE_TYPES: Record<string, string> = {
  missing: 'missing',
  type: 'type_error',
  value: 'value_error',
  below_min: 'greater_than_equal',
  above_max: 'less_than_equal',
  too_long: 'string_too_long',
  empty: 'string_too_short',
  too_many: 'too_long',
};

/** One refused field in FastAPI's words: `loc` its path, in the query when the query holds it, else in the body. */
function validationItem(type: string, param: string | null, msg: string, queryKeys: readonly string[]): ElevenLabsValidationItem {
  const path = param ? param.split(/[.[\]]+/).filter((p) => p !== '').map((p) => (/^\d+$/.test(p) ? Number(p) : p)) : [];
  const where = param && queryKeys.includes(String(path[0])) ? 'query' : 'body';
  return { type, loc: [where, ...path], msg };
}

/**
 * The status of an error on ElevenLabs' door: a refused request (a field breaking a rule, a body that is not a
 * JSON object) is 422, as ElevenLabs answers it and as its SDKs type it (`UnprocessableEntityError`, whose
 * `body.detail` lists the fields); credits that cannot cover the request are 401 `quota_exceeded`, as ElevenLabs
 * answers them — its SDKs retry a 429 (waiting up to a minute each time, twice), never a 401, and waiting does
 * not help until the next month; every other error keeps its status.
 */
export function elevenLabsStatus(wire: WireError): number {
  if (wire.name === 'invalid_parameter' || wire.name === 'invalid_request') return 422;
  if (wire.name === 'resource_pack_exhausted') return 401;
  return wire.status;
}

/**
 * The same error as ElevenLabs' API words it, so that code written against its SDKs reads it as ElevenLabs':
 * a refused request as FastAPI's validation list (`{detail: [{type, loc, msg}]}`, one item per refused field when
 * the message names each: `loc` the field's path, in the query when the query holds it, else in the body; `msg`
 * its fault in words; a message whose faults do not each name a field is one item), anything else as
 * `{detail: {status, message}}` (`status` ElevenLabs' word where it has one: invalid_api_key,
 * needs_authorization, quota_exceeded, too_many_concurrent_requests, bad_prompt; else the catalog's name).
 */
export function elevenLabsError(wire: WireError, code: string, message: string, fault: ParamFault | undefined, queryKeys: readonly string[] = []): ElevenLabsErrorBody {
  if (elevenLabsStatus(wire) === 422) {
    if (wire.name === 'invalid_request') return { detail: [validationItem('json_invalid', null, message, queryKeys)] };
    // one item per refused field, as FastAPI lists them, when every fault the message joins names its field
    const parts = message.split('; ');
    const named = parts.map((part) => NAMED_FIELD.exec(part)?.[1]);
    if (parts.length > 1 && named.every((param) => param !== undefined)) {
      // the fault's rule types the first part of its field (a.b.0.c and a.b[0].c are one field), the others value_error
      const same = (a: string, b: string) => a.replace(/\[(\d+)\]/g, '.$1') === b.replace(/\[(\d+)\]/g, '.$1');
      const typed = fault ? named.findIndex((param) => same(param!, fault.param)) : -1;
      return { detail: parts.map((part, i) => validationItem(RULE_TYPES[i === typed ? fault!.rule : 'value'], named[i]!, part, queryKeys)) };
    }
    return { detail: [validationItem(RULE_TYPES[fault?.rule ?? 'value'], fault?.param ?? named[0] ?? null, message, queryKeys)] };
  }
  const status = code === 'AUTH_MISSING' ? 'needs_authorization' : (STATUS_WORDS[wire.name] ?? wire.name);
  return { detail: { status, message } };
}
