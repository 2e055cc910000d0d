import type { RelayVendor } from './relay.js';
import { type VendorAccount } from './vendor.js';

/** An expand as the door accepted it, in the gateway's own words: what an adapter maps out to its vendor. */
export interface ExpandRequest {
  /** Each side's margin as a ratio of the side it extends (0 to 2). */
  up_ratio: number;
  bottom_ratio: number;
  left_ratio: number;
  right_ratio: number;
  prompt?: string;
  /** How many images (1 to 9). */
  n: number;
  /** Each result also has a watermarked copy. */
  watermark: boolean;
}

/** The input image's facts, once known (a Base64 input at acceptance, a URL when it is read). */
export interface ExpandImageSize {
  width: number;
  height: number;
}

/** The input image as an adapter may send it: by its URL (the vendor fetches it), or its bytes. */
export interface ExpandInput {
  /** The caller's URL, when the image was given as one (already checked to be one the vendor may be handed). */
  url?: string;
  /** Its bytes and what they are (read from the URL first when it was one). */
  bytes(): Promise<{ bytes: Buffer; format: 'png' | 'jpeg'; width: number; height: number }>;
}

/** A create, mapped out of the request by the adapter. */
export interface ExpandCreate {
  request: ExpandRequest;
  image: ExpandInput;
  /** Our id of the task, for vendors that keep the caller's own id (Kling's external_task_id). */
  taskId: string;
  /** Where the upstream is asked to call back (UPSTREAM_CALLBACK_BASE_URL set). */
  callbackUrl?: string;
}

/** What an upstream says of an expand task; a result image is fetched from its link. */
export type ExpandStatus =
  | { state: 'working' }
  | { state: 'succeeded'; images: { url: string; watermarkUrl?: string }[] }
  | { state: 'failed'; reason: string };

/** An image a vendor answered with at once (its bytes checked: a PNG or JPEG within the pixel limit). */
export interface MadeImage {
  body: Buffer;
  contentType: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
}

/** A create's answer: the images themselves (a synchronous vendor), or the upstream's task to watch. */
export type ExpandAnswer = { made: MadeImage[] } | { upstreamId: string; status: ExpandStatus };

/**
 * One expand vendor's protocol: what it cannot make, how a create is sent, and (for a vendor that answers
 * later) how a task is asked about. The relay provider routes by the channel's protocol to its adapter;
 * a new vendor is one such file and a line in `expand-vendors.ts`. Errors are thrown as the UpstreamClient
 * throws them (busy, refused: auth, account, request; unavailable).
 */
export interface ExpandVendor extends RelayVendor<ExpandStatus> {
  /**
   * Why it cannot make this expand exactly as asked, naming the field; null when it can. `size` null: the
   * input is a URL not read yet. Absent: it makes every expand the door accepts.
   */
  unmet?(request: ExpandRequest, size: ExpandImageSize | null): string | null;
  create(account: VendorAccount, create: ExpandCreate): Promise<ExpandAnswer>;
  /** Asks about one task (`once`: one try with a short time limit, as the poller asks); vendors that answer later. */
  query?(account: VendorAccount, upstreamId: string, once: boolean): Promise<ExpandStatus>;
  /**
   * The task our id names upstream, or null when the vendor has none: for vendors whose tasks can be asked
   * for by the caller's own id, so that a create whose answer was lost is found rather than failed or sent twice.
   */
  findByOwnId?(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: ExpandStatus } | null>;
}

/** The margins an expand asks for, in pixels of its input: each ratio times the side it extends. */
export function marginsOf(request: Pick<ExpandRequest, 'up_ratio' | 'bottom_ratio' | 'left_ratio' | 'right_ratio'>, size: ExpandImageSize) {
  return {
    left: Math.round(request.left_ratio * size.width),
    right: Math.round(request.right_ratio * size.width),
    up: Math.round(request.up_ratio * size.height),
    down: Math.round(request.bottom_ratio * size.height),
  };
}
