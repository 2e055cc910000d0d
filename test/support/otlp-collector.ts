import { sendJson, startServer } from './http-server.js';

/** A span as the collector received it (OTLP/HTTP JSON: ids in hex, attributes flattened). */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  /** The resource's service.name. */
  service: unknown;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: (Omit<CollectedSpan, 'attributes' | 'service' | 'parentSpanId'> & { parentSpanId?: string; attributes?: OtlpAttribute[] })[] }[] }[];
}

function flatten(attributes: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue))]));
}

/**
 * A fake OpenTelemetry collector on loopback: accepts OTLP/HTTP JSON exports on POST /v1/traces and keeps
 * every span; anything else (another path, protobuf) is answered 415 and counted in `refused`.
 */
export async function startCollector(): Promise<{ url: string; spans: CollectedSpan[]; exports: number; refused: number; close(): Promise<void> }> {
  const state = { spans: [] as CollectedSpan[], exports: 0, refused: 0 };
  const server = await startServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
      state.refused++;
      return sendJson(res, 415, { error: 'OTLP/HTTP JSON on /v1/traces only' });
    }
    state.exports++;
    const body = JSON.parse(req.body.toString('utf8')) as OtlpExport;
    for (const resource of body.resourceSpans ?? []) {
      const service = flatten(resource.resource?.attributes)['service.name'];
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          state.spans.push({ traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, kind: span.kind, attributes: flatten(span.attributes), service });
        }
      }
    }
    sendJson(res, 200, {});
  });
  return {
    url: server.url,
    get spans() {
      return state.spans;
    },
    get exports() {
      return state.exports;
    },
    get refused() {
      return state.refused;
    },
    close: () => server.close(),
  };
}
