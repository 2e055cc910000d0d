import type { AppConfig } from '../../src/infra/config/app-config.js';
import type { SafeFetchService } from '../../src/infra/outbound/safe-fetch.service.js';
import { UpstreamClient } from '../../src/infra/relay/upstream-client.js';
import type { Tracing } from '../../src/infra/tracing/tracing.service.js';
import type { ImageModelSpec, ImageRequest } from '../../src/vendors/contracts/image-request.js';
import type { ImageCreate, ImageInput } from '../../src/vendors/contracts/image-vendor.js';

/**
 * The UpstreamClient as the relay has it, over plain fetch: for an adapter driven alone against a loopback fake of
 * its vendor (no app; the outbound rules are the gateway's own tests' business).
 */
export function plainUpstreamClient(): UpstreamClient {
  const fetcher = {
    request: async (_purpose: string, url: string, o: { method?: string; headers?: Record<string, string>; body?: string | Buffer }) => {
      const res = await fetch(url, { method: o.method, headers: o.headers, body: o.body });
      const body = Buffer.from(await res.arrayBuffer());
      return { status: res.status, headers: Object.fromEntries(res.headers), body, size: body.length, url };
    },
    fetchBytes: async (_purpose: string, url: string) => ({ body: Buffer.from(await (await fetch(url)).arrayBuffer()) }),
  };
  return new UpstreamClient(fetcher as unknown as SafeFetchService, { outbound: { timeoutMs: 10_000 } } as AppConfig, { enabled: false } as Tracing);
}

/** An image create as the relay hands it to an adapter: the request, its input images and mask, a fresh task id. */
export function imageCreate(spec: ImageModelSpec, request: ImageRequest, inputs: ImageInput[] = [], mask?: ImageInput, callbackUrl?: string): ImageCreate {
  return { model: spec, request, taskId: `task-${Math.random().toString(36).slice(2)}`, callbackUrl, images: async () => inputs, mask: async () => mask, partial: async () => undefined };
}
