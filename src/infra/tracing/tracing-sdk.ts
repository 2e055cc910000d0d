import { type Attributes, type Context, context, type Link, propagation, type SpanKind, trace, TraceFlags, type Tracer } from '@opentelemetry/api';
import type { Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../config/app-config.js';

/** The started SDK: a tracer of its provider, and the way to flush and stop it. */
export interface TracingSdk {
  tracer: Tracer;
  /** Exports what is left and unregisters everything, within `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** A database span is recorded only under a sampled span of ours (a request, a step, a delivery). */
export function isDatabaseSpan(name: string, attributes: Attributes): boolean {
  return name.startsWith('prisma:') || attributes['db.system.name'] !== undefined;
}

/**
 * Starts OpenTelemetry's trace SDK and registers it process-wide: the provider (spans batched and POSTed as
 * OTLP/HTTP JSON), the AsyncLocalStorage context manager (the active span follows awaits) and the W3C
 * trace-context propagator; and Prisma's instrumentation, so the client's operations and queries are spans.
 * Loaded only when tracing is configured: without it, none of these modules is even imported.
 */
export async function startTracingSdk(config: TracingConfig): Promise<TracingSdk> {
  const [sdk, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { resourceFromAttributes }, { OTLPTraceExporter }, semconv, { PrismaInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/semantic-conventions'),
    import('@prisma/instrumentation'),
  ]);
  const ratio = new sdk.TraceIdRatioBasedSampler(config.samplerRatio);
  const root: Record<TracingConfig['sampler'], Sampler> = {
    always_on: new sdk.AlwaysOnSampler(),
    always_off: new sdk.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: new sdk.ParentBasedSampler({ root: ratio }),
  };
  const sampler = new DatabaseSpansFollowTheirParent(root[config.sampler], sdk.SamplingDecision.NOT_RECORD);

  const exporter = new OTLPTraceExporter({ url: config.tracesUrl, headers: config.headers });
  const provider = new sdk.BasicTracerProvider({
    resource: resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: config.serviceName }),
    sampler,
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: config.scheduleDelayMs })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const prisma = new PrismaInstrumentation({ enabled: false });
  prisma.setTracerProvider(provider);
  prisma.enable();

  return {
    tracer: provider.getTracer('media-gateway'),
    shutdown: async (timeoutMs) => {
      prisma.disable();
      let timer: NodeJS.Timeout | undefined;
      // a collector that does not answer must not hold the process's exit
      await Promise.race([provider.shutdown().catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/**
 * The configured sampler, except for database spans: those are recorded only under a sampled parent. The
 * sweepers and the queue's bookkeeping query all the time outside any request, step or delivery; each of
 * those queries would otherwise be a trace of its own.
 */
class DatabaseSpansFollowTheirParent implements Sampler {
  constructor(
    private readonly inner: Sampler,
    private readonly drop: SamplingResult['decision'],
  ) {}

  shouldSample(ctx: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (isDatabaseSpan(name, attributes)) {
      const parent = trace.getSpanContext(ctx);
      if (!parent || (parent.traceFlags & TraceFlags.SAMPLED) === 0) return { decision: this.drop };
    }
    return this.inner.shouldSample(ctx, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `DatabaseSpansFollowTheirParent{${this.inner.toString()}}`;
  }
}
