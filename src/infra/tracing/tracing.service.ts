import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { type Attributes, type Context, context, createContextKey, propagation, ROOT_CONTEXT, type Span, SpanKind, type SpanContext, SpanStatusCode, trace } from '@opentelemetry/api';
import type pg from 'pg';
import { AppConfig } from '../config/app-config.js';
import { startTracingSdk, type TracingSdk } from './tracing-sdk.js';

/** How long shutdown waits for the last spans to be exported. */
const SHUTDOWN_MS = 5000;
/** The span of the unit of work the code runs for: a request, a task's step, a callback delivery. */
const WORK = createContextKey('media-gateway work span');
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /**
   * The W3C `traceparent` of the span's parent, stored with what is worked on (a task, a notification),
   * instead of the active span: the work continues a trace that began elsewhere (another process, earlier).
   */
  parent?: string | null;
  /** When the span began (epoch ms), if before the call. */
  startTime?: number;
  /** A unit of work (a step, a delivery): `traceParent()` answers it inside. */
  work?: boolean;
}

/** A context `Tracing.capture` took, to run later work in. */
export type CapturedTrace = Context;

type HttpRequest = IncomingMessage & { originalUrl?: string; route?: { path?: unknown }; id?: string };

/**
 * OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT (or the traces endpoint) is set: spans for each
 * request, task step, callback delivery, outbound HTTP call and database call, exported over OTLP. Without
 * it the SDK is never loaded and every method here returns at its first line, so the accept path does no
 * extra work (no span, no context manager: on Node.js 20 an AsyncLocalStorage cost about a fifth of a
 * request's CPU; see docs/contributors/performance.md).
 */
@Injectable()
export class Tracing implements OnModuleInit, OnApplicationShutdown {
  /** Whether tracing is configured (the SDK starts during the application's init). */
  readonly enabled: boolean;
  private sdk?: TracingSdk;

  constructor(private readonly config: AppConfig) {
    this.enabled = config.tracing !== undefined;
  }

  async onModuleInit(): Promise<void> {
    const tracing = this.config.tracing;
    if (!tracing) return;
    this.sdk = await startTracingSdk(tracing);
    const to = new URL(tracing.tracesUrl);
    new Logger('Tracing').log({ msg: 'exporting traces', url: `${to.origin}${to.pathname}`, service: tracing.serviceName, sampler: tracing.sampler });
  }

  /** Exports the spans still waiting, then unregisters the SDK. */
  async onApplicationShutdown(): Promise<void> {
    const sdk = this.sdk;
    this.sdk = undefined;
    await sdk?.shutdown(SHUTDOWN_MS);
  }

  /**
   * Runs `work` in a new span, a child of the active span (or of `options.parent`), and ends it when `work`
   * settles; a throw is recorded on it as an error.
   */
  async inSpan<T>(name: string, options: SpanOptions, work: () => Promise<T>): Promise<T> {
    const sdk = this.sdk;
    if (!sdk) return work();
    const parent = options.parent ? propagation.extract(ROOT_CONTEXT, { traceparent: options.parent }) : context.active();
    const span = sdk.tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, startTime: options.startTime }, parent);
    let inner = trace.setSpan(parent, span);
    if (options.work) inner = inner.setValue(WORK, span);
    try {
      return await context.with(inner, work);
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  /** Adds attributes to the active span (what a step's outcome was). */
  annotate(attributes: Attributes): void {
    if (this.sdk) trace.getActiveSpan()?.setAttributes(attributes);
  }

  /**
   * The `traceparent` of the unit of work this code runs for (the request, the step), to store with what it
   * creates (a task, a notification) so that later work, on any instance, continues its trace. Null without
   * tracing.
   */
  traceParent(): string | null {
    if (!this.sdk) return null;
    const span = context.active().getValue(WORK) as Span | undefined;
    return span ? traceParentOf(span.spanContext()) : null;
  }

  /** The trace-context headers (`traceparent`, `tracestate`) of the active span, for an outgoing request. */
  outgoingHeaders(): Readonly<Record<string, string>> {
    if (!this.sdk) return NO_HEADERS;
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return carrier;
  }

  /** The active context, to run later work in (see `within`); undefined without tracing. */
  capture(): CapturedTrace | undefined {
    return this.sdk ? context.active() : undefined;
  }

  /** Runs `work` in a context `capture` took (or as it is, without one). */
  within<T>(captured: CapturedTrace | undefined, work: () => T): T {
    return captured && this.sdk ? context.with(captured, work) : work();
  }

  /** Runs `work` outside the active trace (what it starts is not the caller's: a task's step begun by its request). */
  detached<T>(work: () => T): T {
    return this.sdk ? context.with(ROOT_CONTEXT, work) : work();
  }

  /**
   * Express middleware: a server span per request, continuing an incoming `traceparent`, active for
   * everything the request does (and for its response's listeners: its access line carries trace_id).
   * Registered only when tracing is on.
   */
  httpMiddleware(): (req: HttpRequest, res: ServerResponse, next: () => void) => void {
    return (req, res, next) => {
      const sdk = this.sdk;
      if (!sdk) return next();
      const method = req.method ?? 'GET';
      const url = req.originalUrl ?? req.url ?? '/';
      const end = url.search(/[?#]/);
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = sdk.tracer.startSpan(
        method,
        {
          kind: SpanKind.SERVER,
          attributes: { 'http.request.method': method, 'url.path': end === -1 ? url : url.slice(0, end), 'url.scheme': 'http', ...(req.headers['user-agent'] ? { 'user_agent.original': req.headers['user-agent'] } : {}) },
        },
        parent,
      );
      const inner = trace.setSpan(parent, span).setValue(WORK, span);
      let ended = false;
      const finish = () => {
        if (ended) return;
        ended = true;
        const route = req.route?.path;
        if (typeof route === 'string') {
          span.setAttribute('http.route', route);
          span.updateName(`${method} ${route}`);
        }
        span.setAttribute('http.response.status_code', res.statusCode);
        if (req.id) span.setAttribute('mgw.request_id', req.id);
        if (!res.writableFinished) span.setAttribute('mgw.response_aborted', true);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
      res.once('finish', finish);
      res.once('close', finish);
      context.bind(inner, res);
      context.with(inner, next);
    };
  }

  /**
   * The pool as repositories use it, with a client span per `query` made for a traced unit of work (Prisma's
   * own queries, on the same pool, are spans of its instrumentation). Without tracing, the pool itself.
   */
  tracePool(pool: pg.Pool): pg.Pool {
    if (!this.enabled) return pool;
    const run = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    const query = (...args: unknown[]): Promise<unknown> => {
      const sdk = this.sdk;
      const parent = context.active();
      // outside a traced unit of work (or with a callback, which the repositories never pass): as it is
      if (!sdk || !trace.getSpan(parent) || typeof args[args.length - 1] === 'function') return run(...args);
      const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
      const operation = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
      const span = sdk.tracer.startSpan(operation, { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': text } }, parent);
      return context.with(trace.setSpan(parent, span), () => run(...args)).then(
        (result) => {
          span.end();
          return result;
        },
        (err: unknown) => {
          failed(span, err);
          span.end();
          throw err;
        },
      );
    };
    return new Proxy(pool, {
      get(target, property) {
        if (property === 'query') return query;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}

/** The W3C traceparent of a span: version 00, trace id, span id, flags. */
export function traceParentOf(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-${span.traceFlags.toString(16).padStart(2, '0')}`;
}

function failed(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}
