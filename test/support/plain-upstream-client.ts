import { loopbackUpstreamClient } from './vendors/upstream-client.js';
import type { ImageModelSpec, ImageRequest } from '../../src/vendors/contracts/image-request.js';
import type { ImageCreate, ImageInput } from '../../src/vendors/contracts/image-vendor.js';

/** The UpstreamClient as the relay has it, over the real outbound rules with loopback allowed (one helper for every adapter test). */
export const plainUpstreamClient = loopbackUpstreamClient;

/** An image create as the relay hands it to an adapter: the request, its input images and mask, a fresh task id. */
export function imageCreate(spec: ImageModelSpec, request: ImageRequest, inputs: ImageInput[] = [], mask?: ImageInput, callbackUrl?: string): ImageCreate {
  return { model: spec, request, taskId: `task-${Math.random().toString(36).slice(2)}`, callbackUrl, images: async () => inputs, mask: async () => mask, partial: async () => undefined };
}
