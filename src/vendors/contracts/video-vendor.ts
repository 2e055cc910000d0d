import type { RelayVendor } from './relay.js';
import type { VendorAccount } from './vendor.js';
import type { VendorBilled } from './vendor-billing.js';
import { sniffRaster } from '../../infra/images/image-bounds.js';
import { UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { VideoImage, VideoModelSpec, VideoRequest } from './video-request.js';

/** A create, mapped out of the normalized request by the adapter. */
export interface VendorCreate {
  model: VideoModelSpec;
  request: VideoRequest;
  /** The upstream ids of generations named as frames (the same account made them). */
  generationIds: { first?: string; last?: string };
  /** Where the upstream is asked to call back (UPSTREAM_CALLBACK_BASE_URL set). */
  callbackUrl?: string;
  /** Our id of the task, for vendors that keep the caller's own id (Kling's external_task_id). */
  taskId: string;
  /**
   * A frame's image bytes (fetched from its URL, or a sample; the fitted frame when the gateway fitted it to
   * the asked ratio), for vendors that take images inline only.
   */
  frameImage(position: 'first' | 'last'): Promise<Buffer | undefined>;
  /** The bytes of `request.referenceImages[index]`, for vendors that take images inline only. */
  referenceImage(index: number): Promise<Buffer | undefined>;
}

/** An image's bytes as a `data:` URI, its type read from its magic numbers (a PNG, JPEG or WebP file the step checked). */
export function dataUri(bytes: Buffer): string {
  const format = sniffRaster(bytes);
  return `data:${format === 'png' ? 'image/png' : format === 'webp' ? 'image/webp' : 'image/jpeg'};base64,${bytes.toString('base64')}`;
}

/** An image the vendor takes by URL or inline: the caller's URL as it is, the gateway's own copy (`hosted`) as `inline(bytes)`. */
export async function urlOrInline(image: VideoImage, bytes: () => Promise<Buffer | undefined>, inline: (bytes: Buffer) => string): Promise<string> {
  if (!image.hosted) return image.url;
  const read = await bytes();
  if (!read) throw new UpstreamRefused('an image the request brought could not be read', 0);
  return inline(read);
}

/**
 * What an upstream says of a task. An end may carry what the vendor reported it billed for the task
 * (`billed`), read from its documented answer where it gives one: Kling's `final_unit_deduction` (units),
 * Seedance's `usage.completion_tokens` (tokens), Wan's `usage.duration` (seconds), Runway's `cost.credits`
 * (credits). Luma's generations and Veo's operations report none.
 */
export type VendorStatus =
  | { state: 'working' }
  | { state: 'succeeded'; videoUrl: string; thumbnailUrl?: string; billed?: VendorBilled }
  | { state: 'failed'; reason: string; billed?: VendorBilled };

/**
 * One video vendor's protocol: the models it offers and what each can do, how a create is sent, how a
 * task is asked about, and the cheap call that tests an account. The relay provider routes by the
 * channel's protocol to its adapter; a new vendor is one such file and a line in `video-vendors.ts`.
 * Errors are thrown as the UpstreamClient throws them (busy, refused: auth, account, request; unavailable).
 */
export interface VideoVendor extends RelayVendor<VendorStatus> {
  readonly models: readonly VideoModelSpec[];
  /**
   * It calls back to a URL sent with the create (Luma's and Kling's `callback_url`): its tasks are then polled
   * as a safety net only (UPSTREAM_CALLBACK_POLL_S). A vendor without it is polled on the usual schedule.
   */
  readonly callsBack?: boolean;
  /** Sends the create; answers the upstream's id and what it said of the task. */
  create(account: VendorAccount, create: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }>;
  /** Asks about one task (`once`: one try with a short time limit, as the poller asks). */
  query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus>;
  /**
   * The task this gateway's id (`taskId`, sent with the create) names upstream, or null when the vendor
   * has none: for vendors whose tasks can be asked for by the caller's own id (Kling's external_task_id),
   * so that a create whose answer was lost is found rather than failed or sent twice.
   */
  findByOwnId?(account: VendorAccount, taskId: string, request: VideoRequest): Promise<{ upstreamId: string; status: VendorStatus } | null>;
  /** Cancels a task it is still working on (vendors that can: Runway's DELETE /v1/tasks/{id}). */
  cancel?(account: VendorAccount, upstreamId: string): Promise<void>;
}


/** The vendor id of the model a channel serves under `name`, by the vendor's catalog. */
export function modelOf(vendor: Pick<VideoVendor, 'models'>, vendorModel: string): VideoModelSpec | undefined {
  return vendor.models.find((m) => m.id === vendorModel);
}
