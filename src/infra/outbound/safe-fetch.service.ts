import { createWriteStream, type WriteStream } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import ipaddr from 'ipaddr.js';
import { AppConfig } from '../config/app-config.js';
import { Tracing } from '../tracing/tracing.service.js';
import { describeRange, nonPublicReason } from './address-policy.js';
import { HostResolver, type ResolvedAddress } from './host-resolver.js';
import { StepScope } from '../process/step-scope.js';

/**
 * What an outbound request is for, which decides the addresses it may reach. Every request names one:
 * - `caller`: a URL a caller gave (an expand image, a keyframe, an audio file and the relay's copy of it,
 *   a callback delivery). Public addresses only, whatever OUTBOUND_ALLOW_HOSTS says: a team's URL never
 *   reaches the gateway's network. Only ALLOW_PRIVATE_URLS, a development switch, lets it through.
 * - `upstream`: a channel's upstream (its calls, its tests) and the result files that upstream names.
 *   Public addresses, and the hosts of OUTBOUND_ALLOW_HOSTS whatever they resolve to (an in-cluster upstream).
 */
export type OutboundPurpose = 'caller' | 'upstream';

export type OutboundFailure = 'refused' | 'status' | 'timeout' | 'too_large' | 'network' | 'redirects';

/** Why an outbound request did not give a usable answer; `message` is fit to show a caller. */
export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
    readonly status?: number,
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** How a connect timeout's words begin (OutboundError 'timeout'): no connection was made, so nothing was sent. */
const CONNECT_TIMEOUT = 'could not connect within';

/**
 * Whether a request that failed provably never left: no connection was made (refused, a name that does not
 * resolve, an unreachable host, or none made in time: the request's bytes wait for the connection, and go
 * with the socket when it is given up), so the upstream cannot have acted on it.
 */
export function neverSent(err: OutboundError): boolean {
  return (err.kind === 'network' && /ECONNREFUSED|could not be resolved|EHOSTUNREACH|ENETUNREACH/.test(err.message)) || (err.kind === 'timeout' && err.message.startsWith(CONNECT_TIMEOUT));
}

export interface OutboundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Cap on the response body, enforced while it streams. */
  maxBytes: number;
  /** Follow up to 3 redirects (each target checked again); false returns the 3xx as it is. */
  followRedirects?: boolean;
  timeoutMs?: number;
  /** Answer any status instead of throwing for non-2xx (used by relays and callbacks to read error bodies). */
  acceptAnyStatus?: boolean;
  /** Write a 2xx body to this file as it streams (the answer's `body` is then empty): a video is never held whole. */
  toFile?: string;
  /**
   * Called with each chunk of a 2xx body as it arrives (the body is still collected and answered, under the same
   * cap): an answer read while it streams (server-sent events). If it throws, the request fails with its error.
   */
  onChunk?: (chunk: Buffer) => void;
  /**
   * Reuse connections to the origin (an upstream asked again and again: polls, creates). Each new connection
   * is checked as every request is (its address resolved and checked when it connects, and pinned to it).
   */
  keepAlive?: boolean;
}

/** Connections kept open to one origin, at most. */
const KEEP_ALIVE_SOCKETS = 64;
/** How long a kept-alive connection may idle before the agent drops it (shorter when the server's Keep-Alive hint says so). */
const KEEP_ALIVE_IDLE_MS = 30_000;

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body's length (also when it went to a file). */
  size: number;
  url: string;
}

const MAX_REDIRECTS = 3;

/** How long a caller's URL handed on to an upstream is looked up, at most: a name not resolved by then is the upstream's to resolve. */
const HAND_OFF_LOOKUP_MS = 2000;

/**
 * The one way the service reaches URLs (images, keyframes, audio, callbacks, upstreams and their results),
 * each request for a purpose (`OutboundPurpose`) that decides what it may reach: http(s) only; the host is
 * resolved (HostResolver) and the connection pinned to the checked address, so DNS cannot change between
 * check and use; non-public addresses are refused, but for an upstream's host in OUTBOUND_ALLOW_HOSTS (and
 * anything under ALLOW_PRIVATE_URLS); at most 3 redirects, each checked; connect and total timeouts; a byte
 * cap while streaming. With tracing, each request (each hop) is a client span, and carries its `traceparent`.
 */
@Injectable()
export class SafeFetchService implements OnApplicationShutdown {
  private readonly logger = new Logger('Outbound');
  /** Keep-alive agents by purpose and origin (keepAlive requests), each checking the address of every connection it opens. */
  private readonly agents = new Map<string, http.Agent>();

  constructor(
    private readonly config: AppConfig,
    private readonly tracing: Tracing,
    private readonly resolver: HostResolver,
  ) {}

  /** At the start of a service that serves (createApp; not a CLI whose output is its result): the warning of ALLOW_PRIVATE_URLS. */
  warnAtStart(): void {
    if (this.config.outbound.allowPrivate) {
      this.logger.warn(
        'ALLOW_PRIVATE_URLS=true: callers\' URLs and callbacks may reach loopback, private and link-local addresses (cloud metadata among them). ' +
          'It is a development switch: never set it where teams other than you call the service; name in-cluster upstreams in OUTBOUND_ALLOW_HOSTS instead.',
      );
    }
  }

  onApplicationShutdown(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  /** Sends a request for `purpose` (see OutboundPurpose), following redirects unless asked not to. */
  async request(purpose: OutboundPurpose, url: string, options: OutboundRequest): Promise<OutboundResponse> {
    const deadline = Date.now() + (options.timeoutMs ?? this.config.outbound.timeoutMs);
    let current = url;
    let method = options.method ?? 'GET';
    let body = options.body;
    let headers = options.headers;
    for (let hop = 0; ; hop++) {
      const response = await this.once(purpose, current, { ...options, method, body, headers }, deadline);
      const location = response.headers.location;
      if (options.followRedirects !== false && response.status >= 300 && response.status < 400 && location) {
        if (hop >= MAX_REDIRECTS) throw new OutboundError('redirects', `too many redirects (more than ${MAX_REDIRECTS})`);
        const next = new URL(location, current);
        // An upstream's credentials go to its own origin only, never to where it redirects elsewhere.
        if (next.origin !== new URL(current).origin && headers) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'authorization'));
        current = next.toString();
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      if (!options.acceptAnyStatus && (response.status < 200 || response.status >= 300)) {
        throw new OutboundError('status', `the server answered HTTP ${response.status}`, response.status, retryAfterOf(response.headers));
      }
      return response;
    }
  }

  /** GET a file for `purpose`, following redirects, failing on any non-2xx answer. */
  async fetchBytes(purpose: OutboundPurpose, url: string, maxBytes: number): Promise<OutboundResponse> {
    return this.request(purpose, url, { maxBytes, followRedirects: true });
  }

  /** The same, written to `file` as it arrives; answers how many bytes were written. */
  async fetchToFile(purpose: OutboundPurpose, url: string, maxBytes: number, file: string): Promise<number> {
    return (await this.request(purpose, url, { maxBytes, followRedirects: true, toFile: file })).size;
  }

  /**
   * Why a caller's URL is refused before anything is fetched, judged from the URL alone (no name is
   * resolved): an IP literal that is not public, a `localhost` name, a host of OUTBOUND_ALLOW_HOSTS (the
   * gateway's own upstreams); null when it may be fetched as far as can be told now (its host's addresses
   * are checked when it is fetched) or under ALLOW_PRIVATE_URLS. The words complete "<field> must be a public
   * http(s) URL: …" and never name an address the caller did not write.
   */
  callerUrlRefusal(url: string): string | null {
    if (this.config.outbound.allowPrivate) return null;
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return null; // the field's own validation words a malformed URL
    }
    const host = hostOf(target.hostname);
    if (ipaddr.isValid(host)) {
      const range = nonPublicReason(host);
      return range ? `${host} is ${describeRange(range)}` : null;
    }
    if (host === 'localhost' || host.endsWith('.localhost')) return `the host ${host} is a loopback name`;
    if (this.config.outbound.allowHosts.includes(host)) return `the host ${host} is not public`;
    return null;
  }

  /**
   * Why a caller's URL may not be handed on to an upstream, which fetches it from its own network (an in-cluster
   * upstream: the gateway's): what callerUrlRefusal says, that its host resolves to a non-public address, or
   * that it cannot be resolved here within HAND_OFF_LOOKUP_MS (a name a caller controls could answer slowly to
   * slip past). Null when it resolves to public addresses only, or under ALLOW_PRIVATE_URLS. Same words as
   * callerUrlRefusal. (A name that answers public here and private to the upstream later, DNS rebinding, can
   * only be stopped by the upstream's own egress rules.)
   */
  async callerUrlHandOffRefusal(url: string): Promise<string | null> {
    const judged = this.callerUrlRefusal(url);
    if (judged || this.config.outbound.allowPrivate || !URL.canParse(url)) return judged;
    const { hostname } = new URL(url);
    const host = hostOf(hostname);
    if (ipaddr.isValid(host)) return null; // a literal was judged above
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error('timed out')), HAND_OFF_LOOKUP_MS)));
    let addresses: ResolvedAddress[];
    try {
      addresses = await Promise.race([this.resolver.lookup(hostname.toLowerCase()), timeout]);
    } catch {
      return `the host ${host} could not be resolved (within ${HAND_OFF_LOOKUP_MS / 1000} s)`;
    } finally {
      clearTimeout(timer);
    }
    for (const { address } of addresses) {
      const range = nonPublicReason(address);
      if (range) return `the host ${host} resolves to ${describeRange(range)}`;
    }
    return null;
  }

  /** Whether a request for `purpose` may reach a non-public address of `host`. */
  private mayReachPrivate(purpose: OutboundPurpose, host: string): boolean {
    const { allowPrivate, allowHosts } = this.config.outbound;
    return allowPrivate || (purpose === 'upstream' && allowHosts.includes(host));
  }

  /** Resolves the target's host for `purpose` and checks every address; returns the one to connect to. */
  private async resolve(purpose: OutboundPurpose, target: URL): Promise<ResolvedAddress> {
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new OutboundError('refused', `only http and https URLs are fetched, not ${target.protocol.replace(':', '')}`);
    }
    return this.resolveHost(purpose, target.hostname);
  }

  /** The address to connect to for `hostname`, every address it resolves to checked against the rules of `purpose`. */
  private async resolveHost(purpose: OutboundPurpose, hostname: string): Promise<ResolvedAddress> {
    const host = hostOf(hostname);
    let addresses: ResolvedAddress[];
    if (ipaddr.isValid(host)) {
      addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
    } else {
      try {
        // looked up as written (`name.` is absolute: no search domain), compared without the dot
        addresses = await this.resolver.lookup(hostname.toLowerCase());
      } catch {
        throw new OutboundError('network', `the host ${host} could not be resolved`);
      }
    }
    if (!this.mayReachPrivate(purpose, host)) {
      for (const { address } of addresses) {
        const range = nonPublicReason(address);
        if (!range) continue;
        // Say which rule refused it; for a host name, never what it resolves to (that is internal knowledge).
        const what = ipaddr.isValid(host) ? `${host} is ${describeRange(range)}` : `the host ${host} resolves to ${describeRange(range)}`;
        // an upstream's refusal reaches admins only (the task's attempts): it says how to allow the host
        const allow = purpose === 'upstream' ? `; an upstream's host may be named in OUTBOUND_ALLOW_HOSTS` : '';
        throw new OutboundError('refused', `${what}: only public addresses are fetched (private targets are refused)${allow}`);
      }
    }
    if (addresses.length === 0) throw new OutboundError('network', `the host ${host} has no address`);
    return addresses[0];
  }

  private async once(purpose: OutboundPurpose, url: string, options: OutboundRequest & { method: string }, deadline: number): Promise<OutboundResponse> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new OutboundError('refused', `not a valid URL: ${url.slice(0, 200)}`);
    }
    if (!this.tracing.enabled) return this.send(purpose, target, url, options, deadline);
    // the URL without its query or credentials: signed links and keys stay out of the trace
    const attributes = { 'http.request.method': options.method, 'url.full': `${target.origin}${target.pathname}`, 'server.address': target.hostname, 'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)) };
    return this.tracing.inSpan(options.method, { kind: SpanKind.CLIENT, attributes }, async () => {
      const response = await this.send(purpose, target, url, { ...options, headers: { ...options.headers, ...this.tracing.outgoingHeaders() } }, deadline);
      this.tracing.annotate({ 'http.response.status_code': response.status });
      return response;
    });
  }

  /**
   * The keep-alive agent of the target's origin for `purpose`: a new connection resolves and checks the host
   * when it opens (a refused address fails the request as it would otherwise), and stays pinned to that address.
   */
  private agentFor(purpose: OutboundPurpose, target: URL): http.Agent {
    const key = `${purpose} ${target.protocol}//${target.host}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const lookup: LookupFunction = (hostname, opts, callback) => {
        this.resolveHost(purpose, hostname).then(
          (pinned) => answerLookup(opts, callback, pinned),
          (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
        );
      };
      const Agent = target.protocol === 'https:' ? https.Agent : http.Agent;
      // `timeout` makes the agent honour a server's `Keep-Alive: timeout=N` hint (it drops an idle connection
      // 1 s before the server would; without it, never): a create sent on a connection the server was closing
      // is an answer lost, which fails over or fails the task (seen under load against Node servers' 5 s)
      agent = new Agent({ keepAlive: true, maxSockets: KEEP_ALIVE_SOCKETS, timeout: KEEP_ALIVE_IDLE_MS, lookup } as http.AgentOptions);
      this.agents.set(key, agent);
    }
    return agent;
  }

  private async send(purpose: OutboundPurpose, target: URL, url: string, options: OutboundRequest & { method: string }, deadline: number): Promise<OutboundResponse> {
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new OutboundError('refused', `only http and https URLs are fetched, not ${target.protocol.replace(':', '')}`);
    }
    let agent: http.Agent | false = false;
    let lookup: LookupFunction | undefined;
    if (options.keepAlive) {
      agent = this.agentFor(purpose, target);
    } else {
      const pinned = await this.resolve(purpose, target);
      lookup = (_host, opts, callback) => answerLookup(opts, callback, pinned);
    }
    const client = target.protocol === 'https:' ? https : http;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new OutboundError('timeout', 'timed out');

    // a request made by a task's step ends with the step (its time limit passed): nothing more is sent or written for it
    const step = StepScope.current()?.signal;
    if (step?.aborted) throw new OutboundError('timeout', 'the step that made the request ran out of time');
    return new Promise<OutboundResponse>((resolve, reject) => {
      let settled = false;
      let sink: WriteStream | undefined;
      const stop = () => fail(new OutboundError('timeout', 'the step that made the request ran out of time'));
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        clearTimeout(connect);
        step?.removeEventListener('abort', stop);
        req.destroy();
        sink?.destroy();
        reject(err);
      };
      const req = client.request(
        target,
        {
          method: options.method,
          headers: { 'user-agent': 'media-gateway/1.0', ...options.headers, ...(options.body ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}) },
          ...(lookup ? { lookup } : {}),
          agent,
        },
        (res) => {
          clearTimeout(connect);
          const declared = Number(res.headers['content-length'] ?? -1);
          if (declared > options.maxBytes) {
            return fail(new OutboundError('too_large', `the response is larger than the limit of ${options.maxBytes} bytes (Content-Length ${declared})`));
          }
          const status = res.statusCode ?? 0;
          if (options.toFile && status >= 200 && status < 300) {
            sink = createWriteStream(options.toFile);
            // its code only: the message names the worker's file
            sink.on('error', (err: NodeJS.ErrnoException) => fail(new OutboundError('network', `could not write the download (${err.code ?? 'write error'})`)));
          }
          const chunks: Buffer[] = [];
          let size = 0;
          const onChunk = status >= 200 && status < 300 ? options.onChunk : undefined;
          res.on('data', (chunk: Buffer) => {
            if (settled) return;
            size += chunk.length;
            if (size > options.maxBytes) return fail(new OutboundError('too_large', `the response is larger than the limit of ${options.maxBytes} bytes`));
            try {
              onChunk?.(chunk);
            } catch (err) {
              return fail(err instanceof Error ? err : new Error(String(err)));
            }
            if (!sink) chunks.push(chunk);
            else if (!sink.write(chunk)) {
              res.pause();
              sink.once('drain', () => res.resume());
            }
          });
          res.on('end', () => {
            const done = () => {
              if (settled) return;
              settled = true;
              clearTimeout(total);
              step?.removeEventListener('abort', stop);
              resolve({ status, headers: res.headers, body: sink ? Buffer.alloc(0) : Buffer.concat(chunks, size), size, url });
            };
            if (sink && !settled) sink.end(done);
            else done();
          });
          res.on('error', (err) => fail(new OutboundError('network', `the connection failed: ${err.message}`)));
        },
      );
      const connect = setTimeout(() => fail(new OutboundError('timeout', `${CONNECT_TIMEOUT} ${this.config.outbound.connectTimeoutMs} ms`)), Math.min(this.config.outbound.connectTimeoutMs, remaining));
      const total = setTimeout(() => fail(new OutboundError('timeout', `no complete answer within ${Math.round(remaining / 100) / 10} s (what was left of the request's time limit)`)), remaining);
      // a kept-alive connection is connected already
      req.on('socket', (socket) => (socket.connecting ? socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connect)) : clearTimeout(connect)));
      req.on('error', (err: NodeJS.ErrnoException) => fail(err instanceof OutboundError ? err : new OutboundError('network', `the connection failed: ${err.code ?? err.message}`)));
      step?.addEventListener('abort', stop, { once: true });
      req.end(options.body);
    });
  }
}

/** A URL's hostname as the rules compare it: without IPv6 brackets or a trailing dot (`relay.internal.` is `relay.internal`), lower case. */
function hostOf(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

/** Answers a connection's lookup with the checked address (one, or a list of one when all are asked). */
function answerLookup(opts: unknown, callback: Parameters<LookupFunction>[2], pinned: ResolvedAddress): void {
  if ((opts as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
  else callback(null, pinned.address, pinned.family);
}

/** Retry-After in seconds, given as seconds or as an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterOf(headers: IncomingHttpHeaders): number | undefined {
  const value = headers['retry-after'];
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}
