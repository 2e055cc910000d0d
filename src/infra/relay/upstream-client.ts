import { setTimeout as sleep } from 'node:timers/promises';
import { parseLargeJson } from './large-json.js';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { neverSent, OutboundError, retryAfterOf, SafeFetchService } from '../outbound/safe-fetch.service.js';
import { Tracing } from '../tracing/tracing.service.js';

/** The upstream did not give a usable answer now; trying again later may work. */
export class UpstreamUnavailable extends Error {
  constructor(
    message: string,
    /** The request may have reached the upstream and been acted on (timeout, reset, 5xx). */
    readonly ambiguous: boolean,
    /** What the upstream answered, for the log line: its HTTP status and its own code (a vendor's busy code, an aggregator's 429). */
    readonly answer: { status?: number; code?: number } = {},
  ) {
    super(message);
  }
}

/**
 * The upstream is at capacity (429, 503, or a vendor's busy code under 200) and did not take a create request: the task
 * waits and tries again later, without the wait counting against its deadline.
 */
export class UpstreamBusy extends UpstreamUnavailable {
  constructor(
    message: string,
    /** The wait the upstream asked for (Retry-After), in seconds, when it said. */
    readonly retryAfterS?: number,
    answer: { status?: number; code?: number } = {},
  ) {
    super(message, false, answer);
  }
}

/**
 * A synchronous vendor (one that answers a create with what it made) failed the generation (its 5xx): nothing
 * was made and nothing charged, so the task may go on to another channel at once, as after a busy answer; but
 * the channel had it, and failed it (ChannelRouter: it is not given the task again, and the task ends with
 * these words when no other channel can make it, rather than knocking on the same channel until its deadline).
 */
export class UpstreamGenerationFailed extends UpstreamBusy {}

/** How a task records the create request it sends upstream (TaskStatesRepository.submitMarks). */
export interface SubmitMarks {
  /** The claim the marks are written by (its worker and attempt): the task's other writes of the step name it too. */
  readonly holder: { worker: string; attempt: number };
  /** Before sending: if no answer comes, the next step knows the upstream may have the task. */
  markSubmitting(): Promise<void>;
  /** The upstream surely did not act on it: the next step may send it again. */
  clearSubmitting(): Promise<void>;
  /** The upstream took it under this id; `callback`: the create asked it to call back (its polls are then a safety net). */
  saveUpstreamId(upstreamId: string, options?: { callback?: boolean }): Promise<void>;
  /** The upstream task it held was given up (failed there, or stalled): it holds no upstream task and no channel, and may be sent anew. */
  abandonUpstream(): Promise<void>;
  /** Throws LeaseLost when the claim no longer has the task: checked before a request that acts on the task's upstream task (a cancel) goes out. */
  stillHeld(): Promise<void>;
  /**
   * What the poll that queued this step read of the task's upstream task (the poller's news, carried in the
   * step's job): the step acts on it rather than asking the upstream again. Absent when the step was not
   * queued by a poll that read a status (a new task, a stall, a sweeper's take-over, a status too big to carry).
   */
  readonly polled?: PolledStatus;
}

/** A status a poll read of an upstream task: which task (its upstream id), what the vendor said (plain JSON), and when (ms since the epoch). */
export interface PolledStatus {
  upstreamId: string;
  status: unknown;
  at: number;
}

/**
 * How a request to an upstream account authenticates: the headers it adds. A vendor's folder makes them
 * (Kling's JWT in src/vendors/kling); this client knows no vendor.
 */
export interface UpstreamAuth {
  headers(): Promise<Record<string, string>> | Record<string, string>;
}

/** No credentials (an upstream that needs none, or a channel without them: its calls are refused). */
export const NO_AUTH: UpstreamAuth = { headers: () => ({}) };

/** A Bearer key: what most vendors take. */
export function bearerKey(apiKey: string): UpstreamAuth {
  const headers = { authorization: `Bearer ${apiKey}` };
  return { headers: () => headers };
}

/**
 * Sends a create request between the marks: when the upstream surely did not act on it (busy, or the
 * connection was refused before sending), the mark is cleared and UpstreamBusy thrown, so that the task
 * waits and sends it again later, once, without risking a second (billed) task upstream. `marked`: the
 * mark was written already (with the task's assignment to the channel, ChannelsRepository.assignTask).
 */
export async function submitOnce<T>(marks: SubmitMarks, send: () => Promise<T>, marked = false): Promise<T> {
  if (!marked) await marks.markSubmitting();
  try {
    return await send();
  } catch (err) {
    if (err instanceof UpstreamUnavailable && !err.ambiguous) {
      await marks.clearSubmitting();
      throw err instanceof UpstreamBusy ? err : new UpstreamBusy(err.message);
    }
    throw err;
  }
}

/** The upstream refused the request (4xx other than 429): retrying the same request will not help. */
export class UpstreamRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** auth: the account's credentials were refused; account: it is out of credit; request: this request was refused. */
    readonly kind: 'auth' | 'account' | 'request' = 'request',
    /**
     * The refusal is the gateway's own, not an upstream's words about the request: an upstream URL the outbound
     * rules refuse, a result it could not download, a channel that cannot serve the request. Its message names
     * internal hosts and channels: tenants read a generic reason, admins the message (the task's attempts).
     */
    readonly internal = false,
  ) {
    super(message);
  }

  /** The account, not the task, was refused: nothing was created, and another account may take the task. */
  get accountRefused(): boolean {
    return this.kind !== 'request';
  }

  /** The upstream's words about the caller's request (a content refusal, a bad parameter): what a tenant may read. */
  get aboutRequest(): boolean {
    return this.kind === 'request' && !this.internal;
  }
}

export interface UpstreamAnswer {
  status: number;
  json: Record<string, unknown>;
  /** The body as it came (an image a synchronous vendor answers with). */
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

const MAX_BODY = 1024 * 1024;
const TRIES = 3;

/** How one request to an upstream is made. */
export interface CallOptions {
  body?: unknown;
  /** The account's auth; none without it. */
  auth?: UpstreamAuth;
  /**
   * The vendor's own reading of an answer that is not a success, before the generic one: a refusal where
   * the status alone would say otherwise (Kling's account codes under 429: waiting will not help).
   */
  refusal?: (status: number, json: Record<string, unknown>) => UpstreamRefused | undefined;
  /** Retried on any transient failure (a GET, a create the upstream de-duplicates). */
  idempotent?: boolean;
  /** No retry here on busy answers or refused connections (the caller has another account to try). */
  failFast?: boolean;
  /** One try, with a short time limit (a poll: the poller asks again at its next time). */
  once?: boolean;
  /** Headers a vendor's API asks for besides auth (Runway's X-Runway-Version). */
  headers?: Record<string, string>;
  /** A multipart body instead of JSON (Stability's form with an image file). */
  form?: FormData;
  /** The largest answer taken (1 MiB unless said: an image answer is larger). */
  maxBytes?: number;
  /**
   * How long one request may take (30 s, or OUTBOUND_TIMEOUT_MS when lower, unless said): a synchronous
   * vendor that answers with what it made (an image, up to two minutes at OpenAI) is given longer.
   */
  timeoutMs?: number;
  /**
   * Called with each chunk of a 2xx body as it arrives (the answer is still read whole and answered as always):
   * a vendor that streams what it makes (OpenAI's partial images as server-sent events) hands it on at once.
   * A request retried here (a connection refused before sending) had sent it nothing.
   */
  onChunk?: (chunk: Buffer) => void;
}

/** How long a synchronous image vendor's call may take: OpenAI says an image may take up to two minutes; Gemini's 4K ones are as slow. */
export const SYNC_GENERATION_TIMEOUT_MS = 180_000;

/** A poll's time limit: well within the poller's lease. */
const POLL_TIMEOUT_MS = 10_000;

/**
 * JSON calls to a relay upstream through the outbound rules (SafeFetchService), with the account's auth
 * headers (UpstreamAuth: a vendor's folder makes them).
 * 429, 503 and connection failures before sending are retried here with backoff (Retry-After honoured);
 * what is left is thrown as UpstreamUnavailable (try again later) or UpstreamRefused (fail the task).
 */
@Injectable()
export class UpstreamClient {
  constructor(
    private readonly fetcher: SafeFetchService,
    private readonly config: AppConfig,
    private readonly tracing: Tracing,
  ) {}

  /**
   * Sends one request. `idempotent` requests (GETs, and creates that carry an id the upstream
   * de-duplicates on) are retried on any transient failure; others only when the request surely was
   * not acted on (429, 503, connection refused).
   */
  async call(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    /** `failFast`: no retry here on busy answers or refused connections (the caller has another account to try). */
    options: CallOptions = {},
  ): Promise<UpstreamAnswer> {
    if (!this.tracing.enabled) return this.calling(method, url, options);
    // one span for the call and its retries; each request under it is SafeFetchService's client span
    const target = URL.canParse(url) ? new URL(url) : undefined;
    const attributes = { 'http.request.method': method, ...(target ? { 'url.full': `${target.origin}${target.pathname}`, 'server.address': target.hostname } : {}) };
    return this.tracing.inSpan(`upstream ${method}`, { attributes }, async () => {
      const answer = await this.calling(method, url, options);
      this.tracing.annotate({ 'http.response.status_code': answer.status });
      return answer;
    });
  }

  private async calling(method: 'GET' | 'POST' | 'DELETE', url: string, options: CallOptions): Promise<UpstreamAnswer> {
    const auth = options.auth ?? NO_AUTH;
    const multipart = options.form ? await encodeForm(options.form) : undefined;
    let last: UpstreamUnavailable | undefined;
    for (let attempt = 0; attempt < (options.once ? 1 : TRIES); attempt++) {
      if (attempt > 0) await sleep(Math.min(250 * 2 ** attempt, 2000));
      const bodyType: Record<string, string> = multipart ? { 'content-type': multipart.type } : options.body !== undefined ? { 'content-type': 'application/json' } : {};
      const headers = { accept: 'application/json', ...options.headers, ...(await auth.headers()), ...bodyType };
      try {
        const res = await this.fetcher.request('upstream', url, {
          method,
          headers,
          body: multipart ? multipart.bytes : options.body !== undefined ? JSON.stringify(options.body) : undefined,
          maxBytes: options.maxBytes ?? MAX_BODY,
          acceptAnyStatus: true,
          keepAlive: true,
          followRedirects: method === 'GET',
          onChunk: options.onChunk,
          timeoutMs: options.once ? Math.min(this.config.outbound.timeoutMs, POLL_TIMEOUT_MS) : (options.timeoutMs ?? Math.min(this.config.outbound.timeoutMs, 30_000)),
        });
        const json = /^(image|video|audio)\//.test(String(res.headers['content-type'] ?? '')) ? {} : parseJson(res.body);
        if (res.status >= 200 && res.status < 300) return { status: res.status, json, body: res.body, headers: res.headers };
        const message = upstreamMessage(json) ?? `HTTP ${res.status}`;
        const refused = options.refusal?.(res.status, json);
        if (refused) throw refused;
        if (res.status === 429 || res.status === 503) {
          const wait = retryAfterOf(res.headers);
          last = new UpstreamBusy(`the upstream is busy (HTTP ${res.status}): ${message}`, wait, { status: res.status, code: typeof json.code === 'number' ? json.code : undefined });
          if (options.failFast || options.once) throw last;
          if (wait !== undefined && wait > 0 && wait <= 5) await sleep(wait * 1000);
          continue;
        }
        if (res.status >= 500) {
          last = new UpstreamUnavailable(`the upstream failed (HTTP ${res.status}): ${message}`, true, { status: res.status, code: typeof json.code === 'number' ? json.code : undefined });
          if (options.idempotent) continue;
          throw last;
        }
        throw new UpstreamRefused(message, res.status, res.status === 401 || res.status === 403 ? 'auth' : res.status === 402 ? 'account' : 'request');
      } catch (err) {
        if (!(err instanceof OutboundError)) throw err;
        if (err.kind === 'refused') throw new UpstreamRefused(`the upstream URL is refused: ${err.message}`, 0, 'request', true);
        // a connect timeout too: a create whose connection was never made is sent again (it was not acted on), not
        // taken for one whose answer was lost (which fails a task no other channel can take)
        const beforeSending = neverSent(err);
        last = new UpstreamUnavailable(`the upstream did not answer: ${err.message}`, !beforeSending);
        if (options.failFast && beforeSending) throw last;
        if (beforeSending || options.idempotent) continue;
        throw last;
      }
    }
    throw last!;
  }

  /** Downloads a result file the upstream produced (its URLs expire, so it is copied to our storage). */
  async download(url: string, maxBytes: number): Promise<Buffer> {
    return this.downloading(async () => (await this.fetcher.fetchBytes('upstream', url, maxBytes)).body);
  }

  /** The same, written to `file` as it arrives (a video); answers its size. */
  async downloadToFile(url: string, maxBytes: number, file: string): Promise<number> {
    return this.downloading(() => this.fetcher.fetchToFile('upstream', url, maxBytes, file));
  }

  /** A download's failures as the relays understand them: worth another try later, or not. */
  private async downloading<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof OutboundError && err.kind !== 'refused' && err.kind !== 'too_large' && !(err.kind === 'status' && (err.status ?? 0) < 500)) {
        throw new UpstreamUnavailable(`could not download the upstream's result: ${err.message}`, false);
      }
      throw new UpstreamRefused(`could not download the upstream's result: ${(err as Error).message}`, (err as OutboundError).status ?? 0, 'request', true);
    }
  }
}

/** A form as the bytes and content type (with its boundary) of a multipart/form-data body. */
async function encodeForm(form: FormData): Promise<{ bytes: Buffer; type: string }> {
  const encoded = new Response(form);
  return { bytes: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get('content-type')! };
}

function parseJson(body: Buffer): Record<string, unknown> {
  try {
    const value = parseLargeJson(body);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The upstream's own words: Kling's `message`, Luma's `detail`, an aggregator's `message` or `error`. */
export function upstreamMessage(json: Record<string, unknown>): string | undefined {
  for (const key of ['message', 'detail', 'error', 'failure_reason']) {
    const value = json[key];
    if (typeof value === 'string' && value) return value;
    if (typeof value === 'object' && value && typeof (value as { message?: unknown }).message === 'string') return (value as { message: string }).message;
  }
  // Stability's {"name": "bad_request", "errors": ["…"]}
  if (Array.isArray(json.errors) && json.errors.every((e) => typeof e === 'string') && json.errors.length > 0) return `${typeof json.name === 'string' ? `${json.name}: ` : ''}${json.errors.join('; ')}`;
  return undefined;
}

/** Delay before the next poll: grows with the time the task has been running, from RELAY_POLL_MS to 15 times it. */
export function pollDelaySeconds(startedAt: Date, pollMs: number): number {
  const elapsed = Date.now() - startedAt.getTime();
  return Math.min(Math.max(pollMs, elapsed / 10), pollMs * 15) / 1000;
}

