import { loadConfig } from '../../../src/infra/config/app-config.js';
import { SystemHostResolver } from '../../../src/infra/outbound/host-resolver.js';
import { SafeFetchService } from '../../../src/infra/outbound/safe-fetch.service.js';
import { bearerKey, UpstreamClient } from '../../../src/infra/relay/upstream-client.js';
import { Tracing } from '../../../src/infra/tracing/tracing.service.js';
import type { VendorAccount } from '../../../src/vendors/contracts/vendor.js';
import type { VideoModelSpec, VideoRequest } from '../../../src/vendors/contracts/video-request.js';
import type { VendorCreate } from '../../../src/vendors/contracts/video-vendor.js';
import { flatPng } from '../../support/images.js';
import { sendJson, startServer, type TestServer } from '../../support/http-server.js';

/**
 * What the adapters' unit tests share: the UpstreamClient as the relay has it (the real one, over the real
 * outbound layer, loopback allowed: no app, no database), a vendor standing in on loopback that answers what a
 * test gives it (a vendor's documented answers) and records what it was sent, and the normalized request.
 */
export function realClient(): UpstreamClient {
  const config = loadConfig({ ALLOW_PRIVATE_URLS: 'true', OUTBOUND_TIMEOUT_MS: '10000' });
  const tracing = new Tracing(config);
  const fetcher = new SafeFetchService(config, tracing, new SystemHostResolver());
  // its keep-alive connections closed when the file's tests are done, as the app closes them at shutdown
  afterAll(() => fetcher.onApplicationShutdown());
  return new UpstreamClient(fetcher, config, tracing);
}

export interface Answer {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A vendor on loopback answering each request with `answer(method, path)` (404 when it gives none); `sent` holds what came, bodies parsed. */
export interface Canned {
  server: TestServer;
  account: VendorAccount;
  sent: { method: string; path: string; headers: Record<string, string | string[] | undefined>; body: unknown }[];
  close(): Promise<void>;
}

export async function canned(answer: (method: string, path: string) => Answer | undefined, base = ''): Promise<Canned> {
  const sent: Canned['sent'] = [];
  const server = await startServer((req, res) => {
    const path = req.url ?? '/';
    const text = req.body.toString();
    sent.push({ method: req.method ?? '', path, headers: req.headers, body: text ? JSON.parse(text) : undefined });
    const a = answer(req.method ?? '', path);
    if (!a) return sendJson(res, 404, { message: `no answer for ${req.method} ${path}` });
    for (const [k, v] of Object.entries(a.headers ?? {})) res.setHeader(k, v);
    sendJson(res, a.status ?? 200, a.body);
  });
  return { server, account: { baseUrl: `${server.url}${base}`, auth: bearerKey('test-key') }, sent, close: () => server.close() };
}

/** A normalized request: a prompt alone, as a door sends one asking nothing else. */
export function ask(over: Partial<VideoRequest> = {}): VideoRequest {
  return { prompt: 'A red fox running through snow', loop: false, ...over };
}

/** A model of a catalog, by its id (a test names one the catalog has). */
export function model(models: readonly VideoModelSpec[], id: string): VideoModelSpec {
  const found = models.find((m) => m.id === id);
  if (!found) throw new Error(`no model ${id}`);
  return found;
}

/** A PNG frame's bytes (400x300), as `frameImage` and `referenceImage` give the gateway's own copies. */
export const FRAME = flatPng(400, 300);

/** The create an adapter is given. */
export function createOf(spec: VideoModelSpec, request: VideoRequest, over: Partial<VendorCreate> = {}): VendorCreate {
  return {
    model: spec,
    request,
    generationIds: {},
    taskId: 'task-0001',
    frameImage: async () => FRAME,
    referenceImage: async () => FRAME,
    ...over,
  };
}

/** What a promise threw (a test that expects a throw fails when it resolves). */
export async function thrown(promise: Promise<unknown> | (() => unknown)): Promise<Error> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}
