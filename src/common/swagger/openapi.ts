import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AppConfig } from '../../infra/config/app-config.js';
import { ERROR_CODES } from '../errors/app-error.js';
import { describeError } from '../errors/error-catalog.js';
import type { KindDefinition } from '../tasks/task-kind.js';
import { EXAMPLE_BASE } from './samples.js';
import { ADMIN_KEY_SCHEME, API_KEY_SCHEME, ELEVENLABS_KEY_SCHEME, METRICS_TOKEN_SCHEME } from './security-schemes.js';

const DESCRIPTION = `
An HTTP/JSON gateway for generative media: image expansion (outpainting), video generation and audio clip upload.

**Authentication.** Every operation needs \`Authorization: Bearer <API_KEY>\`. Use **Authorize** above with your key.
The admin routes take the admin key (ADMIN_API_KEY) instead; \`GET /metrics\` takes the metrics token (METRICS_TOKEN) or the admin key.

**Try it out.** The examples are ready to run as they are: the image and audio URLs in them point at sample files this
service serves itself, which a task reads without a network fetch. Examples leave out \`callback_url\` and
\`external_task_id\`: the first needs a receiver you run, the second a value unique among your tasks.

**Errors.** Every error answer has the body \`{ "code", "message", "request_id" }\`; \`request_id\` is also in the
\`X-Request-Id\` header of every answer. On the audio route (\`/music-a/…\`), whose success reply carries a string
\`code\`, error codes are strings too.

| HTTP | code | string code | meaning |
|---|---|---|---|
${ERROR_CODES.map((c) => describeError(c))
  .map((e) => `| ${e.status} | ${e.code} | ${e.name} | ${e.meaning} |`)
  .join('\n')}
`;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Tags shown after the operations' own (each kind declares its tag): the operator's routes last. */
const TAGS: [string, string][] = [
  ['tasks', 'Tasks of every operation in one list (an API key: its own; the admin key: every owner\'s).'],
  ['usage', 'Your usage and credits.'],
  ['samples', 'Sample files to try the API with, read by tasks without a network fetch.'],
  ['media', 'Result files, by signed link.'],
  ['health', 'Liveness, readiness and metrics.'],
  ['admin', 'Keys, webhook secrets and redelivery, with the admin key.'],
  ['upstream callbacks', 'Where upstream vendors call back about the tasks relayed to them (with UPSTREAM_CALLBACK_BASE_URL); not for callers.'],
];

/**
 * In Swagger UI's Authorize dialog every key field asks for the focus, so the last one (the admin key)
 * gets it, and a user who pastes an API key and presses Enter authorizes as admin. This gives the focus
 * to the first field, the API key's, whenever the dialog opens.
 */
const FOCUS_API_KEY_FIELD = `new MutationObserver(function () {
  var modal = document.querySelector('.modal-ux');
  if (modal && !modal.getAttribute('data-focused')) {
    var field = modal.querySelector('input');
    if (field) { modal.setAttribute('data-focused', '1'); field.focus(); }
  }
}).observe(document.documentElement, { childList: true, subtree: true });`;

/**
 * Swagger UI keeps what was authorized for the tab's session only, as the console does: in sessionStorage
 * (a reload keeps it, closing the tab forgets it), never in localStorage, where Swagger UI's own
 * `persistAuthorization` would keep a pasted key, the admin key too, on disk for every later visitor of the
 * browser profile. A plugin (Swagger UI's own API: wrapActions) saves the authorizations after each
 * Authorize and Logout and restores them once the UI has loaded its configuration, where
 * `persistAuthorization` restores its own; it is added to the plugins of the page's SwaggerUIBundle call
 * (this script runs after the bundle is loaded and before the page's onload builds the UI). What an earlier
 * version persisted in localStorage is removed.
 */
const SESSION_AUTHORIZATION = `(function () {
  var KEY = 'mgw-swagger-authorized';
  try { window.localStorage.removeItem('authorized'); } catch (e) {}
  function save(system) {
    try {
      var authorized = system.authSelectors.authorized();
      var value = authorized && authorized.toJS ? authorized.toJS() : {};
      if (Object.keys(value).length > 0) window.sessionStorage.setItem(KEY, JSON.stringify(value));
      else window.sessionStorage.removeItem(KEY);
    } catch (e) {}
  }
  function thenSave(action, system) {
    return function () { var result = action.apply(this, arguments); save(system); return result; };
  }
  function SessionAuthorization() {
    return {
      statePlugins: {
        auth: { wrapActions: { authorize: thenSave, logout: thenSave } },
        configs: {
          wrapActions: {
            loaded: function (action, system) {
              return function () {
                var result = action.apply(this, arguments);
                try {
                  var saved = window.sessionStorage.getItem(KEY);
                  if (saved) system.authActions.restoreAuthorization({ authorized: JSON.parse(saved) });
                } catch (e) {}
                return result;
              };
            },
          },
        },
      },
    };
  }
  var build = window.SwaggerUIBundle;
  window.SwaggerUIBundle = Object.assign(function (options) {
    options.plugins = (options.plugins || []).concat([SessionAuthorization]);
    return build(options);
  }, build);
})();`;

/**
 * Swagger UI shows an audio answer (the speech door's) as a player of the request's URL, which the browser
 * then GETs, a route that has no GET (swagger-api/swagger-ui#8378, open): the player stayed at 0:00 and the
 * audio could not be had. A response interceptor marks an audio answer as a file (Content-Disposition
 * attachment, in the page only: the API sends none), which Swagger UI offers as a download of the bytes the
 * request answered; added to the page's SwaggerUIBundle call as SESSION_AUTHORIZATION's plugin is, after any
 * interceptor the options already have.
 */
const AUDIO_ANSWERS = `(function () {
  var EXTENSIONS = { 'audio/mpeg': 'mp3', 'audio/ogg': 'opus', 'audio/aac': 'aac', 'audio/flac': 'flac', 'audio/wav': 'wav', 'audio/pcm': 'pcm' };
  function downloadable(res) {
    try {
      var type = String((res.headers && (res.headers['content-type'] || res.headers['Content-Type'])) || '').split(';')[0].trim().toLowerCase();
      if (/^audio\\//.test(type) && !res.headers['content-disposition']) res.headers['content-disposition'] = 'attachment; filename="speech.' + (EXTENSIONS[type] || 'audio') + '"';
    } catch (e) {}
    return res;
  }
  var build = window.SwaggerUIBundle;
  window.SwaggerUIBundle = Object.assign(function (options) {
    var before = options.responseInterceptor;
    options.responseInterceptor = function (res) { return downloadable(before ? before(res) : res); };
    return build(options);
  }, build);
})();`;

/** The OpenAPI document served at /docs-json and written by `npm run openapi`; `kinds` are the registry's task kinds. */
export function buildOpenApiDocument(app: INestApplication, kinds: KindDefinition[], config?: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Media Generation Gateway')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    // Relative: the service that serves the document, whatever its address.
    .addServer(config?.publicBaseUrl ?? '/', 'This service')
    // Swagger UI's Authorize dialog lists schemes by name: the API key's comes first.
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'API key: mgw_ and 48 letters and digits', description: 'An API key (mgw_…)' }, API_KEY_SCHEME)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'the ADMIN_API_KEY value', description: 'The admin key (ADMIN_API_KEY), for the /admin routes only' }, ADMIN_KEY_SCHEME)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'the METRICS_TOKEN value', description: "The metrics token (METRICS_TOKEN): Prometheus's, for GET /metrics only" }, METRICS_TOKEN_SCHEME)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'xi-api-key', description: "An API key (mgw_…) in ElevenLabs' header, as its SDKs send it: on the /elevenlabs routes only" }, ELEVENLABS_KEY_SCHEME);
  // Kinds may share a tag (music and concat); the first to declare it describes it.
  const tags = new Map<string, string>();
  for (const [name, description] of [...kinds.map((k): [string, string] => [k.openapi.tag, k.openapi.description]), ...TAGS]) if (!tags.has(name)) tags.set(name, description);
  for (const [name, description] of tags) builder.addTag(name, description);
  const document = SwaggerModule.createDocument(app, builder.build());
  applyKindNames(document, kinds.map((k) => k.name));
  document.info.license = { name: 'Proprietary: internal use within the company', identifier: 'LicenseRef-Proprietary' } as OpenAPIObject['info']['license'];
  markPublicOperations(document);
  toOpenApi31Nullables(document);
  return document;
}

/**
 * Schemas keyed by operation take their names from the registry: the usage report has one property per
 * task kind (all required), and a usage row's `operation` is one of them.
 */
function applyKindNames(document: OpenAPIObject, names: string[]): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, { properties?: Record<string, Record<string, unknown>>; required?: string[] }>;
  const byOperation = schemas.UsageDto?.properties?.operations;
  if (byOperation) {
    byOperation.properties = Object.fromEntries(names.map((n) => [n, { $ref: '#/components/schemas/OperationUsageDto' }]));
    byOperation.required = names;
  }
  for (const schema of ['DailyUsageDto', 'OwnDailyUsageDto']) {
    const operation = schemas[schema]?.properties?.operation;
    if (operation) operation.enum = names;
  }
  for (const schema of ['TaskSummaryDto', 'TaskDetailDto']) {
    const kind = schemas[schema]?.properties?.kind;
    if (kind) kind.enum = names;
  }
  const listTasks = (document.paths['/tasks']?.get?.parameters ?? []) as { name?: string; in?: string; schema?: Record<string, unknown> }[];
  const kindParam = listTasks.find((p) => p.name === 'kind' && p.in === 'query');
  if (kindParam?.schema) kindParam.schema.enum = names;
}

/** Operations without a security requirement need no key; say so explicitly (`security: []`). */
function markPublicOperations(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = (item as Record<string, { security?: unknown[] } | undefined>)[method];
      if (operation && !operation.security) operation.security = [];
    }
  }
}

/**
 * @nestjs/swagger writes nullable fields in OpenAPI 3.0's way (`nullable: true`, and for a reference
 * `{nullable, type: object, allOf: [$ref]}`, which validators reject for null). In 3.1 they are
 * `type: [X, 'null']` and `anyOf: [{$ref}, {type: 'null'}]`.
 */
function toOpenApi31Nullables(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toOpenApi31Nullables(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  if (schema.nullable === true) {
    delete schema.nullable;
    const allOf = schema.allOf as Record<string, unknown>[] | undefined;
    if (allOf?.length === 1 && allOf[0].$ref) {
      delete schema.allOf;
      delete schema.type;
      schema.anyOf = [{ $ref: allOf[0].$ref }, { type: 'null' }];
    } else if (typeof schema.type === 'string') {
      schema.type = [schema.type, 'null'];
      if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
    }
  }
  for (const value of Object.values(schema)) toOpenApi31Nullables(value);
}

/** The base a request reached (PUBLIC_BASE_URL when set), for the document it is served. */
function requestBase(req: Request, config?: AppConfig): string {
  if (config?.publicBaseUrl) return config.publicBaseUrl;
  const host = req.get('host');
  return host && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? `${req.protocol === 'https' ? 'https' : 'http'}://${host}` : EXAMPLE_BASE;
}

/**
 * The document as one request gets it (`rendition`: as Swagger UI gets it, or as it is): its server and the
 * sample URLs in its examples are this service, as the caller reached it.
 */
function forRequest(document: OpenAPIObject, base: string, cache: { json?: string }, rendition?: (d: OpenAPIObject) => OpenAPIObject): OpenAPIObject {
  if (base === EXAMPLE_BASE && !rendition) return document;
  cache.json ??= JSON.stringify(rendition ? rendition(document) : document);
  return JSON.parse(base === EXAMPLE_BASE ? cache.json : cache.json.replaceAll(EXAMPLE_BASE, base)) as OpenAPIObject;
}

/**
 * The document as Swagger UI gets it: the same, written as OpenAPI 3.0.3. Swagger UI reads a 3.1 document
 * through its ApiDOM resolver, which is slow with a document of this size (swagger-api/swagger-ui#10748):
 * measured in headless Chromium, /docs took 7 to 10 s to load and each operation 4 s to open with the 3.1
 * document. Only the nullables (3.1's `type: [X, 'null']` and `anyOf: [{$ref}, {type: 'null'}]`, back to
 * `nullable: true`) and the licence's SPDX identifier differ. /docs-json and /docs-yaml stay 3.1.
 */
export function toOpenApi30(document: OpenAPIObject): OpenAPIObject {
  const copy = structuredClone(document) as OpenAPIObject & { info: { license?: Record<string, unknown> } };
  copy.openapi = '3.0.3';
  if (copy.info.license) delete copy.info.license.identifier;
  toOpenApi30Nullables(copy);
  return copy;
}

function toOpenApi30Nullables(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toOpenApi30Nullables(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const types = schema.type.filter((t) => t !== 'null');
    schema.type = types.length === 1 ? types[0] : types;
    schema.nullable = true;
    if (Array.isArray(schema.enum)) schema.enum = schema.enum.filter((v) => v !== null);
  }
  const anyOf = schema.anyOf as Record<string, unknown>[] | undefined;
  if (anyOf?.length === 2 && anyOf[1]?.type === 'null' && anyOf[0]?.$ref) {
    delete schema.anyOf;
    schema.allOf = [{ $ref: anyOf[0].$ref }];
    schema.nullable = true;
  }
  for (const value of Object.values(schema)) toOpenApi30Nullables(value);
}

export function setupSwagger(app: INestApplication, kinds: KindDefinition[], config?: AppConfig): void {
  // the document is built once, at its first request; each rendition of it is kept as JSON
  const cache: { json?: string } = {};
  const forUi: { json?: string } = {};
  const patch = (req: Request, document: OpenAPIObject) =>
    req.path.endsWith('/swagger-ui-init.js') ? forRequest(document, requestBase(req, config), forUi, toOpenApi30) : forRequest(document, requestBase(req, config), cache);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app, kinds, config), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'Media Generation Gateway — API',
    customJsStr: [SESSION_AUTHORIZATION, AUDIO_ANSWERS, FOCUS_API_KEY_FIELD],
    // not Swagger UI's persistAuthorization (localStorage): SESSION_AUTHORIZATION keeps them for the session
    swaggerOptions: { persistAuthorization: false, displayRequestDuration: true },
    patchDocumentOnRequest: <TRequest>(req: TRequest, _res: unknown, document: OpenAPIObject) => patch(req as unknown as Request, document),
  });
}
