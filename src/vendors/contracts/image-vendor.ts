import type { RelayVendor } from './relay.js';
import type { ImageModelSpec, ImageRequest } from './image-request.js';
import type { VendorAccount } from './vendor.js';

/** An input image (a reference, an image to edit, the mask) as an adapter sends it: its bytes, what they are, and its size. */
export interface ImageInput {
  bytes: Buffer;
  format: 'png' | 'jpeg' | 'webp';
  width: number;
  height: number;
}

/** A create, mapped out of the normalized request by the adapter. */
export interface ImageCreate {
  model: ImageModelSpec;
  request: ImageRequest;
  /** Our id of the task, for vendors that keep the caller's own id (Kling's external_task_id). */
  taskId: string;
  /** Where the upstream is asked to call back (UPSTREAM_CALLBACK_BASE_URL set), for vendors that answer later. */
  callbackUrl?: string;
  /** Partial images per image a streaming caller asked for, 0-3 (OpenAI's partial_images); none when absent. */
  partials?: number;
  /** The input images (request.images of them): references of a generation, or the images an edit changes. */
  images(): Promise<ImageInput[]>;
  /** An edit's mask (request.mask). */
  mask(): Promise<ImageInput | undefined>;
  /** Keeps a partial image the vendor streamed (`index`: 0, 1, …), shown to a caller who streams; vendors that stream only. */
  partial(index: number, image: Buffer): Promise<void>;
}

/** An image the vendor answered with: its bytes (checked and converted by the relay), or a link to fetch at once. */
export type VendorImage = { bytes: Buffer } | { url: string };

/** What an upstream says of an image task. */
export type ImageStatus =
  | { state: 'working' }
  | { state: 'succeeded'; images: VendorImage[]; revisedPrompt?: string }
  | { state: 'failed'; reason: string };

/** A create's answer: the images themselves (a synchronous vendor), or the upstream's task to watch. */
export type ImageAnswer = { made: VendorImage[]; revisedPrompt?: string } | { upstreamId: string; status: ImageStatus };

/**
 * One image vendor's protocol: its models and what each can do, how a create is sent, and (for a vendor that
 * answers later) how a task is asked about. The relay provider routes by the channel's protocol to its
 * adapter; a new vendor is one such file and a line in `image-vendors.ts`. Errors are thrown as the
 * UpstreamClient throws them (busy; refused: auth, account, request — a content refusal as a refused request
 * whose words say so; unavailable).
 */
export interface ImageVendor extends RelayVendor<ImageStatus> {
  readonly models: readonly ImageModelSpec[];
  create(account: VendorAccount, create: ImageCreate): Promise<ImageAnswer>;
  /** Asks about one task (`once`: one try with a short time limit, as the poller asks); vendors that answer later. */
  query?(account: VendorAccount, upstreamId: string, once: boolean): Promise<ImageStatus>;
  /** The task our id names upstream, or null when it has none (vendors that keep the caller's id). */
  findByOwnId?(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: ImageStatus } | null>;
}
