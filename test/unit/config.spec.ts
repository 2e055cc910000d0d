import path from 'node:path';
import { ConfigError, type KindSettingsSpec, loadConfig } from '../../src/infra/config/app-config.js';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toEqual(
      expect.objectContaining({
        port: 3000,
        databaseUrl: undefined,
        dataDir: path.resolve('/srv/app', '.data'),
        adminApiKey: undefined,
        logLevel: 'info',
        embeddedPgPort: 54329,
        authCacheTtlMs: 2000,
      }),
    );
  });

  it('reads and converts each variable; an empty value counts as unset', () => {
    const config = loadConfig(
      { PORT: '8080', DATABASE_URL: 'postgresql://u:p@db:5432/app', DATA_DIR: '/var/lib/mgw', ADMIN_API_KEY: 'x'.repeat(16), LOG_LEVEL: 'debug', AUTH_CACHE_TTL_MS: '0', EMBEDDED_PG_PORT: '' },
      '/srv/app',
    );
    expect(config).toEqual(
      expect.objectContaining({ port: 8080, databaseUrl: 'postgresql://u:p@db:5432/app', dataDir: '/var/lib/mgw', logLevel: 'debug', authCacheTtlMs: 0, embeddedPgPort: 54329 }),
    );
  });

  it('names every bad variable at once, with the value it got', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', ADMIN_API_KEY: 'short' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/PORT .*"eighty"/);
    expect(problems).toMatch(/DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(problems).toMatch(/LOG_LEVEL must be one of .*"loud"/);
    expect(problems).toMatch(/ADMIN_API_KEY must be at least 16 characters/);
  });

  it('checks ranges at their bounds', () => {
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
    expect(() => loadConfig({ PORT: '65536' })).toThrow(/PORT/);
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(() => loadConfig({ PORT: '-1' })).toThrow(/PORT/);
    expect(() => loadConfig({ PORT: '3000.5' })).toThrow(/PORT/);
  });

  it("takes the heap's growth from 0 (V8's own) to 400 %, 300 unless set", () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(300);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '-1' })).toThrow(/HEAP_GROWING_PERCENT must not be less than 0/);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '400' }).heapGrowingPercent).toBe(400);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: '401' })).toThrow(/HEAP_GROWING_PERCENT must not be greater than 400/);
  });
});

describe('loadConfig: the settings of each task kind', () => {
  const kinds: KindSettingsSpec[] = [
    { name: 'expand', prefix: 'EXPAND', timeoutS: 600, prices: { image: { env: 'PRICE_EXPAND_IMAGE', default: 1 } } },
    { name: 'video', prefix: 'VIDEO', timeoutS: 1800, prices: { second: { env: 'PRICE_VIDEO_SECOND', default: 1 } } },
  ];

  it("applies each kind's defaults: its deadline, no cap, the PROVIDER, its prices", () => {
    expect(loadConfig({}, '/srv', kinds).kinds).toEqual({
      expand: { timeoutS: 600, maxRunning: undefined, provider: 'sandbox', relayUrl: undefined, prices: { image: 1 }, options: {}, routing: 'weight' },
      video: { timeoutS: 1800, maxRunning: undefined, provider: 'sandbox', relayUrl: undefined, prices: { second: 1 }, options: {}, routing: 'weight' },
    });
  });

  it('reads the variables the kind declares; TASK_TIMEOUT_S is every kind\'s deadline unless its own is set', () => {
    const config = loadConfig({ TASK_TIMEOUT_S: '90', VIDEO_TIMEOUT_S: '120', EXPAND_MAX_RUNNING: '4', PROVIDER: 'relay', RELAY_EXPAND_URL: 'https://api.example/', VIDEO_PROVIDER: 'sandbox', PRICE_VIDEO_SECOND: '3' }, '/srv', kinds);
    expect(config.kinds).toEqual({
      expand: { timeoutS: 90, maxRunning: 4, provider: 'relay', relayUrl: 'https://api.example', prices: { image: 1 }, options: {}, routing: 'weight' },
      video: { timeoutS: 120, maxRunning: undefined, provider: 'sandbox', relayUrl: undefined, prices: { second: 3 }, options: {}, routing: 'weight' },
    });
  });

  it('checks them at their bounds and names each bad one', () => {
    expect(loadConfig({ EXPAND_TIMEOUT_S: '604800', EXPAND_MAX_RUNNING: '1', PRICE_EXPAND_IMAGE: '0' }, '/srv', kinds).kinds.expand).toEqual(expect.objectContaining({ timeoutS: 604800, maxRunning: 1, prices: { image: 0 } }));
    let error: unknown;
    try {
      loadConfig({ EXPAND_TIMEOUT_S: '604801', VIDEO_MAX_RUNNING: '0', PRICE_VIDEO_SECOND: '-1', EXPAND_PROVIDER: 'magic', VIDEO_PROVIDER: 'relay', RELAY_EXPAND_URL: 'ftp://x' }, '/srv', kinds);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(
      expect.arrayContaining([
        'EXPAND_TIMEOUT_S must be an integer from 1 to 604800 (got "604801")',
        'VIDEO_MAX_RUNNING must be an integer from 1 to 100000 (got "0")',
        'PRICE_VIDEO_SECOND must be an integer from 0 to 1000000 (got "-1")',
        'EXPAND_PROVIDER must be one of the following values: sandbox, relay (got "magic")',
        'RELAY_EXPAND_URL must be an http(s) URL (got "ftp://x")',
        'RELAY_VIDEO_URL must be set when the video provider is relay (PROVIDER or VIDEO_PROVIDER)',
      ]),
    );
  });
});

describe('loadConfig: how a kind with channels chooses among them', () => {
  const kinds: KindSettingsSpec[] = [
    { name: 'video', prefix: 'VIDEO', timeoutS: 1800, prices: {}, channels: { configProtocol: 'luma' }, costRouting: true },
    { name: 'audio', prefix: 'AUDIO', timeoutS: 300, prices: {}, channels: { configProtocol: 'suno' } },
    { name: 'join', prefix: 'JOIN', timeoutS: 60, prices: {}, relays: false },
  ];

  it('reads <PREFIX>_ROUTING (weight by default, or cost) for a kind whose channels price their models only, and names a bad value', () => {
    expect(loadConfig({}, '/srv', kinds).kinds.video.routing).toBe('weight');
    expect(loadConfig({ VIDEO_ROUTING: 'cost' }, '/srv', kinds).kinds.video.routing).toBe('cost');
    expect(loadConfig({ JOIN_ROUTING: 'cost', AUDIO_ROUTING: 'cost' }, '/srv', kinds).kinds.join.routing).toBe('weight');
    expect(loadConfig({ AUDIO_ROUTING: 'cost' }, '/srv', kinds).kinds.audio.routing).toBe('weight');
    expect(() => loadConfig({ VIDEO_ROUTING: 'cheapest' }, '/srv', kinds)).toThrow('VIDEO_ROUTING must be one of the following values: weight, cost (got "cheapest")');
  });

  it('reads RELAY_UPSTREAM_ATTEMPTS within 1 to 10, and RELAY_FAILOVER_ON_CONTENT as a boolean', () => {
    expect(loadConfig({}, '/srv', kinds).relay).toEqual(expect.objectContaining({ upstreamAttempts: 3, failoverOnContent: false }));
    expect(loadConfig({ RELAY_UPSTREAM_ATTEMPTS: '1', RELAY_FAILOVER_ON_CONTENT: 'true' }, '/srv', kinds).relay).toEqual(expect.objectContaining({ upstreamAttempts: 1, failoverOnContent: true }));
    expect(loadConfig({ RELAY_UPSTREAM_ATTEMPTS: '10' }, '/srv', kinds).relay.upstreamAttempts).toBe(10);
    expect(() => loadConfig({ RELAY_UPSTREAM_ATTEMPTS: '0' }, '/srv', kinds)).toThrow(/RELAY_UPSTREAM_ATTEMPTS/);
    expect(() => loadConfig({ RELAY_UPSTREAM_ATTEMPTS: '11' }, '/srv', kinds)).toThrow(/RELAY_UPSTREAM_ATTEMPTS/);
    expect(() => loadConfig({ RELAY_FAILOVER_ON_CONTENT: 'yes' }, '/srv', kinds)).toThrow(/RELAY_FAILOVER_ON_CONTENT must be true or false/);
  });

  it('reads BILLED_COST_TOLERANCE as a fraction from 0 to 10 (0.1 by default), and names a bad value', () => {
    expect(loadConfig({}, '/srv', kinds).relay.billedCostTolerance).toBe(0.1);
    expect(loadConfig({ BILLED_COST_TOLERANCE: '0' }, '/srv', kinds).relay.billedCostTolerance).toBe(0);
    expect(loadConfig({ BILLED_COST_TOLERANCE: '0.25' }, '/srv', kinds).relay.billedCostTolerance).toBe(0.25);
    for (const bad of ['-0.1', '11', 'ten', '10%']) expect(() => loadConfig({ BILLED_COST_TOLERANCE: bad }, '/srv', kinds)).toThrow(`BILLED_COST_TOLERANCE must be a fraction from 0 to 10, such as 0.1 (got ${JSON.stringify(bad)})`);
  });
});

describe('loadConfig: a kind the gateway always runs itself, and its own settings', () => {
  const kinds: KindSettingsSpec[] = [
    { name: 'join', prefix: 'JOIN', timeoutS: 60, prices: {}, relays: false, options: { maxS: { env: 'JOIN_MAX_S', default: 100, min: 10, max: 1000 } } },
  ];

  it('runs it in the sandbox whatever PROVIDER says, without asking for RELAY_<PREFIX>_URL', () => {
    expect(loadConfig({ PROVIDER: 'relay', RELAY_EXPAND_URL: 'https://api.example' }, '/srv', kinds).kinds.join).toEqual(expect.objectContaining({ provider: 'sandbox', relayUrl: undefined, options: { maxS: 100 } }));
  });

  it('reads its options within their bounds, on both sides', () => {
    expect(loadConfig({ JOIN_MAX_S: '10' }, '/srv', kinds).kinds.join.options).toEqual({ maxS: 10 });
    expect(loadConfig({ JOIN_MAX_S: '1000' }, '/srv', kinds).kinds.join.options).toEqual({ maxS: 1000 });
    expect(() => loadConfig({ JOIN_MAX_S: '9' }, '/srv', kinds)).toThrow('JOIN_MAX_S must be an integer from 10 to 1000 (got "9")');
    expect(() => loadConfig({ JOIN_MAX_S: '1001' }, '/srv', kinds)).toThrow(/JOIN_MAX_S/);
  });
});

describe('loadConfig: OpenTelemetry traces (OTEL_*)', () => {
  it('leaves tracing off without an OTLP endpoint, whatever else is set', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '100' }).tracing).toBeUndefined();
  });

  it('turns it on with OTEL_EXPORTER_OTLP_ENDPOINT, sending to its /v1/traces, with the defaults', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: {},
      serviceName: 'media-gateway',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
      scheduleDelayMs: 5000,
    });
  });

  it('takes OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as the whole URL, and reads the rest', () => {
    const tracing = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://vendor.example/otlp/traces',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s3cr%3Dt, tenant = media',
      OTEL_SERVICE_NAME: 'gateway-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_SCHEDULE_DELAY: '200',
    }).tracing;
    expect(tracing).toEqual({ tracesUrl: 'https://vendor.example/otlp/traces', headers: { 'api-key': 's3cr=t', tenant: 'media' }, serviceName: 'gateway-eu', sampler: 'parentbased_traceidratio', samplerRatio: 0.25, scheduleDelayMs: 200 });
  });

  it('stays off with OTEL_SDK_DISABLED=true, even with an endpoint', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }).tracing).toBeDefined();
  });

  it('names each bad OTEL variable', () => {
    let error: unknown;
    try {
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318', OTEL_TRACES_SAMPLER: 'sometimes', OTEL_TRACES_SAMPLER_ARG: '1.5', OTEL_BSP_SCHEDULE_DELAY: '0', OTEL_EXPORTER_OTLP_HEADERS: 'no-value', OTEL_SDK_DISABLED: 'maybe' });
    } catch (err) {
      error = err;
    }
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_SDK_DISABLED']) expect(problems).toContain(name);
  });
});

describe('loadConfig: what is public and who is limited', () => {
  it('takes a METRICS_TOKEN of 16 characters or more, and refuses a shorter one', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'm'.repeat(16) }).metricsToken).toBe('m'.repeat(16));
    expect(() => loadConfig({ METRICS_TOKEN: 'm'.repeat(15) })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
    expect(() => loadConfig({ METRICS_TOKEN: 'REPLACE_ME' })).toThrow(/METRICS_TOKEN/);
  });

  it('limits failed authentications to 20 a minute per address by default; 0 turns the limit off; the window is 1 s to a day', () => {
    expect(loadConfig({}).authFailures).toEqual({ limit: 20, windowS: 60 });
    expect(loadConfig({ AUTH_FAILURE_LIMIT: '0', AUTH_FAILURE_WINDOW_S: '1' }).authFailures).toEqual({ limit: 0, windowS: 1 });
    expect(loadConfig({ AUTH_FAILURE_WINDOW_S: '86400' }).authFailures.windowS).toBe(86_400);
    expect(() => loadConfig({ AUTH_FAILURE_WINDOW_S: '0' })).toThrow(/AUTH_FAILURE_WINDOW_S/);
    expect(() => loadConfig({ AUTH_FAILURE_WINDOW_S: '86401' })).toThrow(/AUTH_FAILURE_WINDOW_S/);
    expect(() => loadConfig({ AUTH_FAILURE_LIMIT: '-1' })).toThrow(/AUTH_FAILURE_LIMIT/);
  });

  it('trusts no proxy by default, and reads TRUST_PROXY as a boolean, a number of proxies or their addresses', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '100' }).trustProxy).toBe(100);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,192.168.1.7, fd00::/8, ::1, uniquelocal' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1', 'uniquelocal']);
  });

  it('names a TRUST_PROXY it cannot read, and each part of it', () => {
    for (const bad of ['yes', '101', '10.0.0.0/33', '10.1', 'fd00::/129', 'loopback,,10.0.0.1', 'proxy.internal', '10.0.0.0/8/8']) {
      let error: unknown;
      try {
        loadConfig({ TRUST_PROXY: bad });
      } catch (err) {
        error = err;
      }
      expect([bad, error instanceof ConfigError && (error as ConfigError).problems.join('\n')]).toEqual([bad, expect.stringMatching(/^TRUST_PROXY must be false, true, the number of proxies/)]);
    }
  });
});

describe('loadConfig: OUTBOUND_ALLOW_HOSTS', () => {
  it('reads hosts as a URL writes them: lower case, an IPv6 address in brackets or not, a name with or without its final dot', () => {
    const config = loadConfig({ OUTBOUND_ALLOW_HOSTS: ' Relay.Internal. , [FD00::1],10.0.0.7,, ' }, '/srv');
    expect(config.outbound.allowHosts).toEqual(['relay.internal', 'fd00::1', '10.0.0.7']);
  });
});
