import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
}

/**
 * Checks answers against the service's own OpenAPI document (served at /docs-json): the JSON body of
 * each answer to a documented operation must match the schema the document gives for that status, and
 * the status must be documented. Answers to undocumented routes (unknown paths, /docs) are not judged.
 */
export class OpenApiValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly routes: Route[];
  private readonly compiled = new Map<string, ValidateFunction | null>();

  constructor(private readonly doc: any) {
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema({ ...doc, $id: 'openapi.json' });
    this.routes = Object.entries(doc.paths).flatMap(([template, ops]: [string, any]) =>
      Object.keys(ops).map((method) => ({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      })),
    );
  }

  /** The problem with an answer, or null when it matches the document (or the route is not in it). */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): string | null {
    const pathname = path.split('?')[0];
    const route = this.routes.find((r) => r.method === method.toUpperCase() && r.pattern.test(pathname));
    if (!route) return null;
    const responses = this.doc.paths[route.template][method.toLowerCase()].responses;
    const documented = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!documented) return `${method} ${route.template} answered ${status}, which the document does not list (it lists ${Object.keys(responses).join(', ')})`;
    if (!contentType?.includes('json') || !documented.content?.['application/json']) return null;
    const key = `${route.template} ${method.toLowerCase()} ${status}`;
    if (!this.compiled.has(key)) {
      const pointer = ['paths', route.template, method.toLowerCase(), 'responses', responses[String(status)] ? String(status) : 'default', 'content', 'application/json', 'schema']
        .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/');
      this.compiled.set(key, this.ajv.compile({ $ref: `openapi.json#/${pointer}` }));
    }
    const validate = this.compiled.get(key)!;
    if (validate && !validate(body)) {
      const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
      return `${method} ${route.template} ${status}: the body does not match the document's schema: ${errors.join('; ')}`;
    }
    return null;
  }
}

const validators = new Map<string, Promise<OpenApiValidator | null>>();
/** By document, its own address left out: instances serving the same document share one validator and its compiled schemas. */
const byDocument = new Map<string, OpenApiValidator>();
/** The task kinds of each instance started in this process (startTestApp), by address: what its document depends on. */
const kindsAt = new Map<string, string>();

/**
 * Says that the instance at `base` runs these task kinds. Its document is then the run's one for those kinds:
 * every instance of the same build and kinds serves the same document (only its address differs), so the first
 * instance asked for it in the run writes it to the run's directory (TEST_CACHE_DIR) and the others are not
 * asked (building it takes Nest's Swagger scanner half a second of CPU per instance).
 */
export function runsKinds(base: string, kinds: readonly string[]): void {
  kindsAt.set(base, kinds.join(','));
}

/** The validator of the service at `base`, from its own /docs-json (null if it serves none). */
export function validatorFor(base: string): Promise<OpenApiValidator | null> {
  let validator = validators.get(base);
  if (!validator) {
    const kinds = kindsAt.get(base);
    validator = (kinds === undefined ? served(base) : runDocument(base, kinds))
      .then((text) => {
        if (text === null) return null;
        const key = createHash('sha256').update(text).digest('hex');
        if (!byDocument.has(key)) byDocument.set(key, new OpenApiValidator(JSON.parse(text)));
        return byDocument.get(key)!;
      })
      .catch(() => null);
    validators.set(base, validator);
  }
  return validator;
}

/** The document the service at `base` serves, its own address left out; null if it serves none. */
async function served(base: string): Promise<string | null> {
  const res = await fetch(`${base}/docs-json`);
  return res.ok ? (await res.text()).replaceAll(base, '') : null;
}

async function runDocument(base: string, kinds: string): Promise<string | null> {
  const dir = process.env.TEST_CACHE_DIR;
  if (!dir) return served(base);
  const file = path.join(dir, `openapi-${createHash('sha256').update(kinds).digest('hex').slice(0, 16)}.json`);
  try {
    return await readFile(file, 'utf8');
  } catch {
    const text = await served(base);
    if (text !== null) {
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, text);
      await rename(temporary, file);
    }
    return text;
  }
}
