import { type ArgumentMetadata, Injectable, ValidationPipe, type ValidationError, type ValidationPipeOptions } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { AppError, type ParamFault, type ParamRule } from '../errors/app-error.js';
import { isMultipartBody, readsNullAsAbsent, refusesUnknownFields, withoutNulls } from './body-fields.js';
import { unstorableRule } from './storable-strings.js';

/** Path and query values longer than this are refused before any handler or query sees them. */
export const MAX_PARAM_CHARS = 2048;

/** The pipe's options, shared by its strict twin. */
const OPTIONS: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  stopAtFirstError: false,
  // the value and the object that held it are kept only for faultOf (what rule it broke, the field's declared
  // type); messages never echo them
  validationError: { target: true, value: true },
  exceptionFactory: (errors: ValidationError[]) => new AppError('INVALID_PARAMETER', formatValidationErrors(errors), undefined, faultOf(errors)),
};

/**
 * class-validator on every DTO, with every fault of a request named in one message
 * ("prompt must be at most 2500 characters; n must be one of 1..9"), the first one also as a ParamFault
 * (its parameter and rule, which OpenAI's doors answer as OpenAI's codes). Before that, every path parameter
 * and query value is checked for what PostgreSQL could not store as sent (unstorableRule: NUL, a lone
 * surrogate) and for length. Bodies were checked for the same when JsonBodyGuard parsed them.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  /** The same rules for the bodies that refuse their unknown fields (RefusesUnknownFields), at any depth. */
  private readonly strict = new ValidationPipe({ ...OPTIONS, forbidNonWhitelisted: true });

  constructor() {
    super(OPTIONS);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'param' || metadata.type === 'query') {
      assertPlainValues(value, metadata.data);
    }
    if (metadata.type === 'query' && metadata.metatype && this.toValidate(metadata)) assertOneValueEach(value, metadata.metatype);
    if (metadata.type === 'body' && metadata.metatype && this.toValidate(metadata) && isMultipartBody(value)) assertOnePartEach(value as Record<string, unknown>, metadata.metatype);
    if (metadata.type === 'body' && metadata.metatype && this.toValidate(metadata)) {
      if (value === undefined) {
        value = {};
      } else if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new AppError('INVALID_REQUEST', 'Request body must be a JSON object');
      } else if (readsNullAsAbsent(metadata.metatype)) {
        value = withoutNulls(value);
      }
    }
    if (metadata.type === 'body' && metadata.metatype && refusesUnknownFields(metadata.metatype)) {
      refusePrototypeKeys(value);
      return this.strict.transform(value, metadata);
    }
    return super.transform(value, metadata);
  }
}

/**
 * Refuses unstorable and over-long strings in path parameters and query values (400 naming the
 * parameter). After percent-decoding they hold no lone surrogate (an invalid sequence in a path fails to
 * decode; in a query it is refused before, by assertUtf8Query), but the check costs nothing and keeps the rule
 * true whatever parses them.
 */
function assertPlainValues(value: unknown, name?: string): void {
  const problems: string[] = [];
  const visit = (v: unknown, path: string): void => {
    if (typeof v === 'string') {
      const rule = unstorableRule(v);
      if (rule) problems.push(`${path} ${rule}`);
      else if (v.length > MAX_PARAM_CHARS) problems.push(`${path} must be at most ${MAX_PARAM_CHARS} characters long`);
    } else if (Array.isArray(v)) {
      v.forEach((item) => visit(item, path));
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, item] of Object.entries(v)) visit(item, path ? `${path}.${k}` : k);
    }
  };
  visit(value, name ?? '');
  if (problems.length > 0) throw new AppError('INVALID_PARAMETER', [...new Set(problems)].join('; '));
}

/**
 * Refuses a query whose percent-encoding is not UTF-8 (`q=%ED%A0%80`, `%FF`), as a path's is: the query parser
 * reads such bytes as U+FFFD, so the value would be used as some other text (a search for "???" answered 200).
 * A `%` not followed by two hex digits is left to the parser (kept as it is), as before.
 */
export function assertUtf8Query(url: string): void {
  const at = url.indexOf('?');
  if (at < 0 || url.indexOf('%', at) < 0) return;
  for (const pair of url.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    for (const part of eq < 0 ? [pair] : [pair.slice(0, eq), pair.slice(eq + 1)]) {
      if (decodesAsUtf8(part)) continue;
      const key = eq < 0 ? pair : pair.slice(0, eq);
      const name = decodesAsUtf8(key) ? decodeURIComponent(key.replace(/\+/g, ' ').replace(/%(?![0-9a-fA-F]{2})/g, '%25')).slice(0, 100) : undefined;
      const shown = part.length > 100 ? `${part.slice(0, 100)}…` : part;
      throw new AppError('INVALID_PARAMETER', `${name === undefined ? 'a query key' : `the query parameter ${name}`} holds a percent-encoded sequence that is not UTF-8 text (${shown})`, undefined, { param: name ?? 'query', rule: 'value' });
    }
  }
}

function decodesAsUtf8(part: string): boolean {
  try {
    decodeURIComponent(part.replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
    return true;
  } catch {
    return false;
  }
}

/** The words of a field a strict body does not have. */
function notAField(path: string): string {
  return `${path} is not a field of this body (a misspelt or unknown field is refused, never ignored)`;
}

/** Keys JSON.parse makes own fields of that class-transformer passes over, so the whitelist never sees them. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A strict body's `__proto__`, `constructor` or `prototype` field, at any depth, refused as any unknown field is. */
function refusePrototypeKeys(value: unknown, path = ''): void {
  if (Array.isArray(value)) value.forEach((item, i) => refusePrototypeKeys(item, `${path}[${i}]`));
  else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      const at = path ? `${path}.${key}` : key;
      if (PROTOTYPE_KEYS.has(key)) throw new AppError('INVALID_PARAMETER', notAField(at));
      refusePrototypeKeys((value as Record<string, unknown>)[key], at);
    }
  }
}

/**
 * Refuses a route's query parameter written in bracket form (`state[x]=failed`, `kind[]=video`: what qs-style
 * clients send for objects and lists): the query parser keeps such a key as it is, so it would be dropped as
 * unknown and the filter silently not applied. A key in bracket form whose base is no parameter of the route
 * is dropped as any unknown key is. A parameter sent twice (`limit=1&limit=2`) is refused saying so, unless it
 * takes a list (`@IsArray`, or rules for each item).
 */
function assertOneValueEach(value: unknown, metatype: new (...args: never[]) => unknown): void {
  if (typeof value !== 'object' || value === null) return;
  const metadata = getMetadataStorage().getTargetValidationMetadatas(metatype, '', false, false);
  const params = new Set(metadata.map((m) => m.propertyName));
  const lists = new Set(metadata.filter((m) => m.name === 'isArray' || m.each === true).map((m) => m.propertyName));
  const problems = Object.entries(value).flatMap(([key, sent]) => {
    const base = /^([^[\]]+)\[/.exec(key)?.[1];
    if (base !== undefined && params.has(base)) return [`${base} must be one value, sent as ${base}=<value> (not ${key})`];
    // a key sent more than once (kind=a&kind=b) is read as a list, which no parameter takes
    if (Array.isArray(sent) && params.has(key) && !lists.has(key)) return [`${key} must be one value, sent once (it was sent ${sent.length} times)`];
    return [];
  });
  if (problems.length > 0) throw new AppError('INVALID_PARAMETER', problems.join('; '), undefined, { param: problems[0].split(' ')[0], rule: 'type' });
}

/**
 * Refuses a multipart text part of the body's fields sent more than once, or as a list (`seconds[]`): multer
 * reads both as a list, which the field would otherwise be told is of the wrong type. A field that takes a list
 * (`@IsArray`, rules for each item) is exempt, and so are parts the body does not declare (dropped as unknown
 * fields are: a route's file parts, `image[]`, are not in the body). Within a declared object field (multer
 * nests `input_reference[image_url]`), any list is such a repeat: no multipart field nests a list.
 */
function assertOnePartEach(body: Record<string, unknown>, metatype: new (...args: never[]) => unknown): void {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(metatype, '', false, false);
  const params = new Set(metadata.map((m) => m.propertyName));
  const lists = new Set(metadata.filter((m) => m.name === 'isArray' || m.each === true).map((m) => m.propertyName));
  const repeated = (value: unknown, name: string): [string, unknown[]] | undefined => {
    if (Array.isArray(value)) return [name, value];
    if (typeof value !== 'object' || value === null) return undefined;
    for (const [key, item] of Object.entries(value)) {
      const found = repeated(item, `${name}[${key}]`);
      if (found) return found;
    }
    return undefined;
  };
  for (const [key, value] of Object.entries(body)) {
    if (!params.has(key) || lists.has(key)) continue;
    const found = repeated(value, key);
    if (!found) continue;
    const [name, sent] = found;
    const how = sent.length > 1 ? `it was sent ${sent.length} times` : `it was sent as a list, ${name}[]`;
    throw new AppError('INVALID_PARAMETER', `${name} must be one value: one part named ${name}, sent once (${how})`, undefined, { param: name, rule: 'type' });
  }
}

export function formatValidationErrors(errors: ValidationError[], parent = ''): string {
  return [...new Set(collect(errors, parent))].join('; ');
}

function collect(errors: ValidationError[], parent: string): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    // a rule of an array's items is worded for any item (`models[].vendor_model must …`): the message names the one refused
    const indexed = path.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
    const anyItem = indexed.replace(/\[\d+\]/g, '[]');
    // a missing value is told it is required (in its isDefined words where it has them), else one of the wrong
    // type that alone: the other rules of the field presuppose a value of its type
    const broken = Object.entries(error.constraints ?? {});
    // each rule's words for this field: a nested DTO's own name (`url …`) and an item's any-item name (`models[].x …`) made the path
    const worded = (msg: string): string => {
      if (anyItem !== indexed && msg.startsWith(`${anyItem} `)) return indexed + msg.slice(anyItem.length);
      return msg.startsWith(error.property) && path !== error.property ? path + msg.slice(error.property.length) : msg;
    };
    const missing = error.value === undefined && broken.length > 0 && !broken.some(([rule]) => rule === 'isDefined' || rule === 'whitelistValidation');
    const first = broken.find(([rule]) => rule === 'isDefined') ?? broken.find(([rule]) => TYPE_CONSTRAINTS.has(rule));
    const own = missing
      ? [requiredWords(indexed, broken.map(([, msg]) => worded(msg)), first && worded(first[1]))]
      : (first ? [first] : broken).map(([rule, msg]) => (rule === 'whitelistValidation' ? notAField(indexed) : worded(msg)));
    return [...own, ...collect(error.children ?? [], path)];
  });
}

/**
 * A missing field's words: its own where a rule already says it is required ("bottom_expansion_ratio is
 * required (down_expansion_ratio is accepted …)"), else required, with what its type rule (else its first
 * rule) asks of it ("model is required: it must be a string naming …", "format is required: it must be one of
 * wav, flac").
 */
function requiredWords(field: string, messages: string[], typeRule: string | undefined): string {
  const said = messages.find((m) => m.startsWith(`${field} is required`));
  if (said) return said;
  const rule = typeRule ?? messages[0];
  return rule?.startsWith(`${field} must `) ? `${field} is required: it ${rule.slice(field.length + 1)}` : `${field} is required`;
}

/** Constraints that say a value is of the wrong type (a decimal where a whole number is due counts). */
const TYPE_CONSTRAINTS = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject', 'isNumberString']);
const LENGTH_CONSTRAINTS = new Set(['maxLength', 'maxChars', 'length']);

/** The first refused parameter (depth first, as the message names it first) and the rule it broke. */
export function faultOf(errors: ValidationError[], parent = ''): ParamFault | undefined {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.keys(error.constraints ?? {});
    if (constraints.length > 0) return { param: path, ...ruleOf(constraints, error.value, declaredInteger(error)) };
    const inner = faultOf(error.children ?? [], path);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * Whether the refused field is declared a whole number (`@IsInt`) or any number (`@IsNumber`), as OpenAI's codes
 * follow the parameter's type, not the value sent (`speed: 5` is decimal_above_max_value); undefined when it is
 * declared neither (a rule written by hand), where the value's own type decides.
 */
function declaredInteger(error: ValidationError): boolean | undefined {
  const target = error.target?.constructor;
  if (typeof target !== 'function') return undefined;
  const names = getMetadataStorage()
    .getTargetValidationMetadatas(target, '', false, false)
    .filter((m) => m.propertyName === error.property)
    .map((m) => m.name);
  if (names.includes('isInt')) return true;
  if (names.includes('isNumber')) return false;
  return undefined;
}

function ruleOf(constraints: string[], value: unknown, declared: boolean | undefined): { rule: ParamRule; integer?: boolean } {
  if (value === undefined || value === null) return { rule: 'missing' };
  if (constraints.some((c) => TYPE_CONSTRAINTS.has(c)) || (constraints.includes('maxChars') && typeof value !== 'string')) return { rule: 'type' };
  const integer = declared ?? (typeof value === 'number' && Number.isInteger(value));
  if (constraints.includes('min')) return { rule: 'below_min', integer };
  if (constraints.includes('max')) return { rule: 'above_max', integer };
  if (constraints.includes('arrayMaxSize')) return { rule: 'too_many' };
  if (value === '') return { rule: 'empty' };
  if (typeof value === 'string' && constraints.some((c) => LENGTH_CONSTRAINTS.has(c))) return { rule: 'too_long' };
  return { rule: 'value' };
}
