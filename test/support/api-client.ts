import { validatorFor } from './openapi-validator.js';

// Requests to an instance, in-process or a child process: apart from test-app.ts (which loads the whole
// application), so that a test of child processes alone does not load it.

/**
 * A key for `owner`, made through the admin API (POST /admin/keys) of a running instance whose ADMIN_API_KEY
 * is `admin`: what a test of a child process needs, with no process start of its own (the key-create CLI is
 * tested in startup.e2e).
 */
export async function createKeyThrough(base: string, admin: string, owner: string): Promise<string> {
  const res = await api(base, 'POST', '/admin/keys', { key: admin, body: { owner, name: 'test' } });
  if (res.status !== 201) throw new Error(`POST /admin/keys answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.body.key as string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * A small fetch wrapper: JSON in, JSON (or text) out. Every answer is checked against the service's own
 * OpenAPI document (its status must be documented for the route, its JSON body must match the schema);
 * a mismatch fails the test. `unchecked` skips that, for answers the test means to be odd.
 */
export async function api<T = any>(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; unchecked?: boolean } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON; tests that care look at `text`
  }
  if (!options.unchecked) {
    const problem = (await validatorFor(base))?.check(method, path, res.status, res.headers.get('content-type'), parsed);
    if (problem) throw new Error(`the answer does not match the OpenAPI document: ${problem}\nbody: ${text.slice(0, 600)}`);
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}
