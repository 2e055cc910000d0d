import 'reflect-metadata';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { plainToInstance } from 'class-transformer';
import { IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, validateSync } from 'class-validator';
import { parseSecretKey } from '../crypto/secret-box.js';
import { exampleSecretProblem } from './example-secrets.js';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const ROLES = ['api', 'worker', 'all'] as const;
export type Role = (typeof ROLES)[number];
export const PROVIDERS = ['sandbox', 'relay'] as const;
export const ROUTINGS = ['weight', 'cost'] as const;
export type RoutingName = (typeof ROUTINGS)[number];
export type ProviderName = (typeof PROVIDERS)[number];
export const STORAGE_DRIVERS = ['local', 'postgres', 's3'] as const;
export const MEDIA_DELIVERIES = ['proxy', 'redirect'] as const;
export type MediaDelivery = (typeof MEDIA_DELIVERIES)[number];
export type StorageDriverName = (typeof STORAGE_DRIVERS)[number];
/** OTEL_TRACES_SAMPLER's values, as the OpenTelemetry specification names them. */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

const BOOLEAN = ['true', 'false', '1', '0'];
const HTTP_URL = /^https?:\/\/[^\s/]+/;
/** W3C Baggage-like `key=value` pairs, comma-separated (values may be percent-encoded). */
const OTLP_HEADERS = /^\s*[^\s=,]+\s*=[^,]*(,\s*[^\s=,]+\s*=[^,]*)*$/;
const DAY_S = 24 * 3600;
const BILLED_TOLERANCE_RULE = 'BILLED_COST_TOLERANCE must be a fraction from 0 to 10, such as 0.1';
/** Variables whose values are credentials. */
const SECRET_VARIABLE = /KEY|SECRET|TOKEN|PASSWORD|HEADERS|^DATABASE_URL$/;
/** The secrets the operator makes (not a vendor's or a store's credentials, which their issuer gives). */
const MADE_SECRETS = new Set(['ADMIN_API_KEY', 'CHANNEL_SECRET_KEY', 'CHANNEL_SECRET_KEY_PREVIOUS', 'METRICS_TOKEN']);

/**
 * The raw environment, as strings, with the rules each variable must follow.
 * Every variable the service reads is declared here and documented in README.md and .env.example.
 */
class EnvironmentVariables {
  @IsOptional() @IsInt() @Min(0) @Max(65535)
  PORT: number = 3000;

  @IsOptional() @IsString() @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsOptional() @IsString() @MinLength(1)
  DATA_DIR: string = './.data';

  @IsOptional() @IsInt() @Min(1) @Max(1000)
  DATABASE_POOL_SIZE: number = 10;

  @IsOptional() @IsInt() @Min(100) @Max(120_000)
  DATABASE_POOL_TIMEOUT_MS: number = 5000;

  @IsOptional() @IsString() @MinLength(1)
  WORK_DIR?: string;

  @IsOptional() @IsInt() @Min(1024 * 1024) @Max(2 ** 40)
  BODY_INFLIGHT_MAX_BYTES: number = 256 * 1024 * 1024;

  @IsOptional() @IsInt() @Min(0) @Max(10_000_000)
  DEFAULT_REQUESTS_PER_MINUTE?: number;

  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  DEFAULT_MAX_CONCURRENT_TASKS?: number;

  @IsOptional() @IsInt() @Min(0) @Max(2_000_000_000)
  DEFAULT_MONTHLY_CREDITS?: number;







  @IsOptional() @IsString() @MinLength(16, { message: 'ADMIN_API_KEY must be at least 16 characters long' }) @MaxLength(512)
  ADMIN_API_KEY?: string;

  @IsOptional() @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @IsOptional() @IsInt() @Min(1) @Max(65535)
  EMBEDDED_PG_PORT: number = 54329;

  @IsOptional() @IsInt() @Min(0) @Max(60_000)
  AUTH_CACHE_TTL_MS: number = 2000;

  @IsOptional() @IsString() @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters long' }) @MaxLength(512)
  METRICS_TOKEN?: string;

  @IsOptional() @IsInt() @Min(0) @Max(1_000_000)
  AUTH_FAILURE_LIMIT: number = 20;

  @IsOptional() @IsInt() @Min(1) @Max(86_400)
  AUTH_FAILURE_WINDOW_S: number = 60;

  @IsOptional() @IsString()
  TRUST_PROXY?: string;

  @IsOptional() @IsIn(ROLES)
  ROLE: Role = 'all';

  @IsOptional() @IsInt() @Min(1) @Max(64)
  WORKER_CONCURRENCY?: number;

  @IsOptional() @IsInt() @Min(2) @Max(3600)
  WORKER_LEASE_S: number = 30;

  @IsOptional() @IsInt() @Min(1) @Max(3600)
  HOLD_RECHECK_S: number = 2;

  @IsOptional() @IsInt() @Min(0) @Max(400)
  HEAP_GROWING_PERCENT: number = 300;

  @IsOptional() @IsIn(PROVIDERS)
  PROVIDER: ProviderName = 'sandbox';




  @IsOptional() @IsInt() @Min(0) @Max(600_000)
  SANDBOX_DELAY_MS: number = 0;




  @IsOptional() @IsString()
  RELAY_API_KEY?: string;

  @IsOptional() @IsInt() @Min(10) @Max(600_000)
  RELAY_POLL_MS: number = 2000;

  @IsOptional() @IsInt() @Min(1) @Max(1000)
  RELAY_CONCURRENCY: number = 32;

  @IsOptional() @IsInt() @Min(1) @Max(1000)
  RELAY_POLL_PER_CHANNEL: number = 16;

  @IsOptional() @IsInt() @Min(1) @Max(10)
  RELAY_UPSTREAM_ATTEMPTS: number = 3;

  @IsOptional() @IsIn(BOOLEAN, { message: 'RELAY_FAILOVER_ON_CONTENT must be true or false' })
  RELAY_FAILOVER_ON_CONTENT: string = 'false';

  @IsOptional() @Matches(HTTP_URL, { message: 'UPSTREAM_CALLBACK_BASE_URL must be an http(s) URL at which upstreams reach this gateway, such as https://media.example.com' })
  UPSTREAM_CALLBACK_BASE_URL?: string;

  @IsOptional() @IsInt() @Min(1) @Max(86_400)
  UPSTREAM_CALLBACK_POLL_S: number = 300;

  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }, { message: BILLED_TOLERANCE_RULE }) @Min(0, { message: BILLED_TOLERANCE_RULE }) @Max(10, { message: BILLED_TOLERANCE_RULE })
  BILLED_COST_TOLERANCE: number = 0.1;

  @IsOptional() @IsString()
  CHANNEL_SECRET_KEY?: string;

  @IsOptional() @IsString()
  CHANNEL_SECRET_KEY_PREVIOUS?: string;

  @IsOptional() @IsInt() @Min(1) @Max(1000)
  CHANNEL_FAILURE_THRESHOLD: number = 5;

  @IsOptional() @IsInt() @Min(1) @Max(3600)
  CHANNEL_CIRCUIT_OPEN_S: number = 30;

  @IsOptional() @IsInt() @Min(0) @Max(86_400)
  CHANNEL_TEST_INTERVAL_S: number = 300;

  @IsOptional() @IsIn(BOOLEAN, { message: 'ALLOW_PRIVATE_URLS must be true or false' })
  ALLOW_PRIVATE_URLS: string = 'false';

  @IsOptional() @IsString()
  OUTBOUND_ALLOW_HOSTS: string = '';

  @IsOptional() @IsInt() @Min(100) @Max(120_000)
  OUTBOUND_CONNECT_TIMEOUT_MS: number = 5000;

  @IsOptional() @IsInt() @Min(100) @Max(3_600_000)
  OUTBOUND_TIMEOUT_MS: number = 60_000;

  @IsOptional() @IsInt() @Min(1) @Max(2 ** 40)
  AUDIO_MAX_BYTES: number = 50 * 1024 * 1024;

  @IsOptional() @IsInt() @Min(300) @Max(65_535)
  IMAGE_MAX_SIDE: number = 8192;

  @IsOptional() @IsInt() @Min(90_000) @Max(1_073_741_824)
  IMAGE_MAX_PIXELS: number = 8192 * 8192;

  @IsOptional() @Matches(/^\//, { message: 'FFMPEG_PATH must be the absolute path of an ffmpeg binary, such as /usr/bin/ffmpeg' })
  FFMPEG_PATH?: string;

  @IsOptional() @IsInt() @Min(1) @Max(7 * DAY_S)
  TASK_TIMEOUT_S?: number;




  @IsOptional() @IsInt() @Min(1) @Max(365 * DAY_S)
  RESULT_URL_TTL_S: number = 7 * DAY_S;

  @IsOptional() @IsInt() @Min(1) @Max(3650)
  RESULT_RETENTION_DAYS: number = 30;

  @IsOptional() @IsIn(STORAGE_DRIVERS)
  STORAGE_DRIVER: StorageDriverName = 'local';

  @IsOptional() @IsString() @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'S3_BUCKET must be a bucket name (3-63 lower-case letters, digits, dots and hyphens)' })
  S3_BUCKET?: string;

  @IsOptional() @Matches(HTTP_URL, { message: 'S3_ENDPOINT must be an http(s) URL such as http://minio:9000 (leave it unset for AWS S3)' })
  S3_ENDPOINT?: string;

  @IsOptional() @IsString() @MinLength(1)
  S3_REGION: string = 'us-east-1';

  @IsOptional() @IsString() @MinLength(1)
  S3_ACCESS_KEY_ID?: string;

  @IsOptional() @IsString() @MinLength(1)
  S3_SECRET_ACCESS_KEY?: string;

  @IsOptional() @IsIn(BOOLEAN, { message: 'S3_FORCE_PATH_STYLE must be true or false' })
  S3_FORCE_PATH_STYLE?: string;

  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9/_.-]*$/, { message: 'S3_PREFIX must be letters, digits and / _ . - (a key prefix such as media-gateway/)' })
  S3_PREFIX?: string;

  @IsOptional() @IsIn(MEDIA_DELIVERIES)
  MEDIA_DELIVERY: MediaDelivery = 'proxy';

  @IsOptional() @IsInt() @Min(1) @Max(7 * DAY_S)
  MEDIA_REDIRECT_TTL_S: number = 300;

  @IsOptional() @IsInt() @Min(1) @Max(3600)
  SHUTDOWN_TIMEOUT_S: number = 25;

  @IsOptional() @Matches(HTTP_URL, { message: 'PUBLIC_BASE_URL must be an http(s) URL such as https://media.example.com' })
  PUBLIC_BASE_URL?: string;

  @IsOptional() @Matches(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, { message: 'CALLBACK_RETRY_SCHEDULE_S must be comma-separated seconds, such as 5,30,120' })
  CALLBACK_RETRY_SCHEDULE_S: string = '5,30,120,600,1800,3600';

  @IsOptional() @IsInt() @Min(1) @Max(30 * DAY_S)
  CALLBACK_GIVE_UP_AFTER_S: number = DAY_S;

  @IsOptional() @IsInt() @Min(100) @Max(60_000)
  CALLBACK_TIMEOUT_MS: number = 10_000;

  @IsOptional() @IsInt() @Min(0) @Max(30 * DAY_S)
  WEBHOOK_ROTATION_OVERLAP_S: number = DAY_S;

  // OpenTelemetry's standard variables (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
  // tracing runs only when an endpoint is set.
  @IsOptional() @Matches(HTTP_URL, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL such as http://otel-collector:4318' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  @IsOptional() @Matches(HTTP_URL, { message: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL such as http://otel-collector:4318/v1/traces' })
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;

  @IsOptional() @Matches(OTLP_HEADERS, { message: 'OTEL_EXPORTER_OTLP_HEADERS must be comma-separated key=value pairs, such as api-key=secret,tenant=media' })
  OTEL_EXPORTER_OTLP_HEADERS?: string;

  @IsOptional() @IsString() @MinLength(1) @MaxLength(255)
  OTEL_SERVICE_NAME: string = 'media-gateway';

  @IsOptional() @IsIn(TRACE_SAMPLERS)
  OTEL_TRACES_SAMPLER: TraceSamplerName = 'parentbased_always_on';

  @IsOptional() @Matches(/^(0(\.\d+)?|1(\.0+)?)$/, { message: 'OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, such as 0.25' })
  OTEL_TRACES_SAMPLER_ARG?: string;

  @IsOptional() @IsInt() @Min(1) @Max(600_000)
  OTEL_BSP_SCHEDULE_DELAY: number = 5000;

  @IsOptional() @IsIn(BOOLEAN, { message: 'OTEL_SDK_DISABLED must be true or false' })
  OTEL_SDK_DISABLED: string = 'false';
}

export interface CallbackConfig {
  /** Delay before each retry, in seconds; the last one repeats until giveUpAfterS. */
  retryScheduleS: number[];
  /** A notification not delivered this long after its cycle began is given up on. */
  giveUpAfterS: number;
  /** Per attempt. */
  timeoutMs: number;
  /** After a rotation, the previous secret also signs for this long. */
  rotationOverlapS: number;
}

/** The key that seals every secret the service stores (see src/infra/crypto/sealing-keys.ts). */
export interface SealingConfig {
  /** CHANNEL_SECRET_KEY (32 bytes); unset: the key kept in keyFile, made at the first start. */
  key?: Buffer;
  /** CHANNEL_SECRET_KEY_PREVIOUS: keys that still open (never seal) values, during a rotation. */
  previousKeys: Buffer[];
  /** Where the key is kept when CHANNEL_SECRET_KEY is unset: DATA_DIR/sealing.key (mode 0600). */
  keyFile: string;
}

export interface RelayConfig {
  apiKey?: string;
  /**
   * The credentials of a configuration channel (RELAY_<OP>_URL) by vendor protocol, from the variables its
   * descriptor declares (VendorSettingsSpec), for the vendors whose variables are all set: Kling's
   * RELAY_KLING_ACCESS_KEY and _SECRET_KEY. Any other vendor's configuration channel takes RELAY_API_KEY.
   */
  vendorCredentials: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Consecutive failures that open a channel's circuit, and its first open time (it grows with each opening, to 10 min). */
  circuit: { failureThreshold: number; openS: number };
  /** How often auto-disabled channels are tested, in seconds (0: never; an admin's test still works). */
  testIntervalS: number;
  /** First poll delay; later polls back off up to 15 times this. */
  pollMs: number;
  /** Relayed steps (creates, downloads) running at once on an instance, apart from the CPU-bound workers; also the polls in flight. */
  concurrency: number;
  /** Polls in flight at once to one channel, per instance. */
  pollPerChannel: number;
  /** Upstream tasks one task may have: its first, and the ones it fails over to after an upstream took it and failed or stalled. */
  upstreamAttempts: number;
  /** A vendor's content refusal fails over too (RELAY_FAILOVER_ON_CONTENT); by default it ends the task. */
  failoverOnContent: boolean;
  /** Where upstreams reach this gateway to call back (UPSTREAM_CALLBACK_BASE_URL); unset: polling only. */
  callbackBaseUrl?: string;
  /** How often a task whose upstream was asked to call back is polled anyway (the safety net). */
  callbackPollS: number;
  /**
   * How far what a vendor billed for an upstream task (at the channel's prices) may differ from what the
   * gateway priced it, as a fraction of that price, before it counts as a billing mismatch (BILLED_COST_TOLERANCE).
   */
  billedCostTolerance: number;
}

/** A limit per owner; null is unlimited. */
export interface OwnerLimitValues {
  requestsPerMinute: number | null;
  maxConcurrentTasks: number | null;
  monthlyCredits: number | null;
}

/**
 * The settings a task kind declares (see KindDefinition): its variables are <PREFIX>_TIMEOUT_S,
 * <PREFIX>_MAX_RUNNING, <PREFIX>_PROVIDER and RELAY_<PREFIX>_URL, and its prices' own.
 */
export interface KindSettingsSpec {
  /** The kind's name (expand, video…): the key of AppConfig.kinds. */
  name: string;
  /** Upper-case prefix of its variables (EXPAND). */
  prefix: string;
  /** Default deadline in seconds, counted from the task's first start (TASK_TIMEOUT_S overrides it for every kind). */
  timeoutS: number;
  /** Its prices, by name: the variable and its default, in credits. */
  prices: Record<string, { env: string; default: number }>;
  /** False for a kind the gateway always runs itself (no <PREFIX>_PROVIDER, no RELAY_<PREFIX>_URL). */
  relays?: boolean;
  /**
   * Its relay goes through upstream channels: RELAY_<PREFIX>_URL, when set, is one channel, and may be left unset
   * (channels from the admin API). That channel speaks `configProtocol` (a channel protocol the operation's vendor
   * registry names: the interface its door is) unless a vendor's own credential variables are set for it.
   */
  channels?: { configProtocol: string };
  /** Its channels' models carry prices: <PREFIX>_ROUTING may choose the cheapest (weight or cost). */
  costRouting?: boolean;
  /** Its own integer settings, by name: the variable, its default and its bounds. */
  options?: Record<string, { env: string; default: number; min: number; max: number }>;
}

/** What a vendor declares of the environment: the variables that hold a configuration channel's credentials, by credential field, set together. */
export interface VendorSettingsSpec {
  protocol: string;
  configCredentials?: Readonly<Record<string, string>>;
}

/** A task kind's settings, validated. */
export interface KindConfig {
  /** Deadline of a task, counted from its first start. */
  timeoutS: number;
  /** Tasks of the kind running at once across every instance (an upstream's concurrency); undefined is no cap. */
  maxRunning?: number;
  provider: ProviderName;
  /** The upstream (RELAY_<PREFIX>_URL); set when the provider is relay. */
  relayUrl?: string;
  /** What RELAY_<PREFIX>_URL speaks when no vendor's credential variables are set for it (KindSettingsSpec.channels); undefined for a kind without channels. */
  configProtocol?: string;
  /** Credits, by the price's name. */
  prices: Record<string, number>;
  /** Its own settings, by name (KindSettingsSpec.options). */
  options: Record<string, number>;
  /** How a new task chooses among channels of the same priority (<PREFIX>_ROUTING, kinds whose models have prices): by weight, or the cheapest first. */
  routing: RoutingName;
}

/** OpenTelemetry traces (OTEL_*): set exactly when an OTLP endpoint is, and the SDK is not disabled. */
export interface TracingConfig {
  /** The OTLP/HTTP (JSON) URL spans are POSTed to: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS), such as a vendor's key. */
  headers: Record<string, string>;
  /** The resource's service.name. */
  serviceName: string;
  sampler: TraceSamplerName;
  /** The ratio of the traceidratio samplers (OTEL_TRACES_SAMPLER_ARG), from 0 to 1. */
  samplerRatio: number;
  /** How long finished spans wait to be exported together (OTEL_BSP_SCHEDULE_DELAY). */
  scheduleDelayMs: number;
}

/**
 * The bounds of every image a caller or an upstream chose, read from its header before anything decodes it
 * (IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS): also sharp's limitInputPixels, so libvips itself refuses to decode past it.
 */
export interface ImageLimits {
  maxSide: number;
  maxPixels: number;
}

export interface OutboundConfig {
  allowPrivate: boolean;
  allowHosts: string[];
  connectTimeoutMs: number;
  timeoutMs: number;
}

/** Typed, validated settings. The only code that reads `process.env` is the entry point that builds this. */
export class AppConfig {
  readonly port!: number;
  /** Set when an external PostgreSQL is used; undefined means "start the embedded one". */
  readonly databaseUrl?: string;
  /** Absolute path. */
  readonly dataDir!: string;
  readonly adminApiKey?: string;
  readonly logLevel!: LogLevel;
  /** Connections in the pool that serves requests and workers. */
  readonly databasePoolSize!: number;
  /** How long a query waits for a pooled connection (or a transaction to start) before answering 503. */
  readonly databasePoolTimeoutMs!: number;
  /** Absolute path of the service's own scratch directory (video renders); cleared of dead runs at start. */
  readonly workDir!: string;
  /** Total bytes of large request bodies (over the default limit) read at once; past it, new ones get 503. */
  readonly bodyInflightMaxBytes!: number;
  /** The limits of an owner no admin has set them for (DEFAULT_*; unset is unlimited). */
  readonly defaultLimits!: OwnerLimitValues;
  /** Each task kind's settings, by its name (see KindSettingsSpec). */
  readonly kinds!: Record<string, KindConfig>;
  readonly embeddedPgPort!: number;
  /** How long a key lookup may be served from memory; a revoked key stops working within this time. */
  readonly authCacheTtlMs!: number;
  /** The Bearer token Prometheus reads /metrics with (METRICS_TOKEN); the admin key also reads it. */
  readonly metricsToken?: string;
  /** Failed authentications one client address may make within the window before it is refused with 429 (0: no limit). */
  readonly authFailures!: { limit: number; windowS: number };
  /** Express's `trust proxy`: which peers' X-Forwarded-For (and -Proto) are believed, for the client's address. */
  readonly trustProxy!: TrustProxy;
  /** api: HTTP only; worker: jobs only; all: both. */
  readonly role!: Role;
  readonly workerConcurrency!: number;
  /** A worker holds a task this long between heartbeats; a dead worker's task is picked up after it. */
  readonly workerLeaseS!: number;
  /** A request held for its task's end is woken by the end; it reads the task's row this often besides (a lost notification's safety net). */
  readonly holdRecheckS!: number;
  /**
   * How far V8 lets the heap grow past what a full collection left before it collects again, in percent (V8's
   * `--heap-growing-percent`, set at start); 0: V8's own choice.
   */
  readonly heapGrowingPercent!: number;
  readonly sandboxDelayMs!: number;
  readonly relay!: RelayConfig;
  readonly sealing!: SealingConfig;
  readonly outbound!: OutboundConfig;
  readonly audioMaxBytes!: number;
  readonly images!: ImageLimits;
  /** The ffmpeg to run (FFMPEG_PATH); unset: the system's, else the npm package's (infra/ffmpeg/ffmpeg-binary.ts). */
  readonly ffmpegPath?: string;
  readonly resultUrlTtlS!: number;
  readonly resultRetentionDays!: number;
  readonly storageDriver!: StorageDriverName;
  /** The bucket of STORAGE_DRIVER=s3 (set exactly when it is chosen). */
  readonly s3?: S3Config;
  /** proxy: /media streams the bytes; redirect (s3 only): 302 to a presigned URL living MEDIA_REDIRECT_TTL_S at most. */
  readonly mediaDelivery!: MediaDelivery;
  readonly mediaRedirectTtlS!: number;
  /** On SIGTERM the instance drains (requests, jobs) and exits within this many seconds. */
  readonly shutdownTimeoutS!: number;
  /** Base of the absolute result URLs; when unset, the request's own host (or http://localhost:PORT). */
  readonly publicBaseUrl?: string;
  /**
   * Set when this process owns its database (the embedded one): no other instance can hold a task,
   * so at start every lease left by a previous run is void at once.
   */
  readonly soleInstance!: boolean;
  readonly callbacks!: CallbackConfig;
  /** OpenTelemetry traces; undefined: no SDK, no exporter, nothing traced. */
  readonly tracing?: TracingConfig;

  constructor(values: AppConfigValues) {
    Object.assign(this, values);
  }

  /** A copy with some settings replaced (used where the database URL is only known after start-up). */
  with(overrides: Partial<AppConfigValues>): AppConfig {
    return new AppConfig({ ...this, ...overrides });
  }

  get runsApi(): boolean {
    return this.role !== 'worker';
  }

  get runsWorkers(): boolean {
    return this.role !== 'api';
  }
}

export interface S3Config {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Put before every key (with a trailing slash when it has none). */
  prefix: string;
}

export type AppConfigValues = Omit<AppConfig, 'with' | 'runsApi' | 'runsWorkers'>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const MAX_TIMEOUT_S = 7 * DAY_S;

/** An optional integer variable within [min, max]; a problem is pushed for anything else. */
function integerVar(present: Record<string, string | undefined>, name: string, min: number, max: number, problems: string[]): number | undefined {
  const raw = present[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
    problems.push(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`);
    return undefined;
  }
  return value;
}

/** Each vendor's configuration-channel credentials whose variables are all set; a problem for those set in part. */
function vendorSettings(present: Record<string, string | undefined>, vendors: readonly VendorSettingsSpec[], problems: string[]): Record<string, Record<string, string>> {
  const credentials: Record<string, Record<string, string>> = {};
  for (const { protocol, configCredentials } of vendors) {
    const fields = Object.entries(configCredentials ?? {});
    const set = fields.filter(([, variable]) => present[variable] !== undefined);
    if (set.length === 0) continue;
    if (set.length < fields.length) problems.push(`${fields.map(([, v]) => v).join(' and ')} must be set together`);
    else credentials[protocol] = Object.fromEntries(fields.map(([field, variable]) => [field, present[variable]!]));
  }
  return credentials;
}

/** The settings of each task kind, from the variables its spec names. */
function kindSettings(present: Record<string, string | undefined>, specs: KindSettingsSpec[], defaults: { provider: ProviderName; timeoutS?: number }, problems: string[]): Record<string, KindConfig> {
  const kinds: Record<string, KindConfig> = {};
  for (const spec of specs) {
    const name = spec.name;
    const relays = spec.relays !== false;
    const providerVar = `${spec.prefix}_PROVIDER`;
    let provider = relays ? defaults.provider : 'sandbox';
    if (relays && present[providerVar] !== undefined) {
      if ((PROVIDERS as readonly string[]).includes(present[providerVar]!)) provider = present[providerVar] as ProviderName;
      else problems.push(`${providerVar} must be one of the following values: ${PROVIDERS.join(', ')} (got ${JSON.stringify(present[providerVar])})`);
    }
    const urlVar = `RELAY_${spec.prefix}_URL`;
    const relayUrl = relays ? present[urlVar] : undefined;
    if (relayUrl !== undefined && !HTTP_URL.test(relayUrl)) problems.push(`${urlVar} must be an http(s) URL (got ${JSON.stringify(relayUrl)})`);
    if (provider === 'relay' && relayUrl === undefined && !spec.channels) problems.push(`${urlVar} must be set when the ${name} provider is relay (PROVIDER or ${providerVar})`);
    const prices: Record<string, number> = {};
    for (const [price, { env: variable, default: fallback }] of Object.entries(spec.prices)) prices[price] = integerVar(present, variable, 0, 1_000_000, problems) ?? fallback;
    const options: Record<string, number> = {};
    for (const [option, { env: variable, default: fallback, min, max }] of Object.entries(spec.options ?? {})) options[option] = integerVar(present, variable, min, max, problems) ?? fallback;
    const routingVar = `${spec.prefix}_ROUTING`;
    let routing: RoutingName = 'weight';
    if (spec.costRouting && present[routingVar] !== undefined) {
      if ((ROUTINGS as readonly string[]).includes(present[routingVar]!)) routing = present[routingVar] as RoutingName;
      else problems.push(`${routingVar} must be one of the following values: ${ROUTINGS.join(', ')} (got ${JSON.stringify(present[routingVar])})`);
    }
    kinds[name] = {
      timeoutS: integerVar(present, `${spec.prefix}_TIMEOUT_S`, 1, MAX_TIMEOUT_S, problems) ?? defaults.timeoutS ?? spec.timeoutS,
      maxRunning: integerVar(present, `${spec.prefix}_MAX_RUNNING`, 1, 100_000, problems),
      provider,
      relayUrl: relayUrl?.replace(/\/+$/, ''),
      configProtocol: spec.channels?.configProtocol,
      prices,
      options,
      routing,
    };
  }
  return kinds;
}

/**
 * Validates the environment once; throws a ConfigError naming every bad variable. `kinds` are the
 * settings the task kinds declare (the registry's: see src/config.ts), validated with the rest.
 */
export function loadConfig(env: Record<string, string | undefined>, cwd = process.cwd(), kinds: KindSettingsSpec[] = [], vendors: readonly VendorSettingsSpec[] = []): AppConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const vars = plainToInstance(EnvironmentVariables, present, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(vars, { whitelist: false, skipMissingProperties: false });
  // a secret's value is never repeated in a message (it would reach the logs): only its length
  const got = (name: string) => (SECRET_VARIABLE.test(name) ? `${present[name]?.length ?? 0} characters` : JSON.stringify(present[name]));
  const problems = errors.flatMap((e) => Object.values(e.constraints ?? {}).map((msg) => `${msg} (got ${got(e.property)})`));

  const kindConfigs = kindSettings(present, kinds, { provider: vars.PROVIDER, timeoutS: vars.TASK_TIMEOUT_S }, problems);
  const sealingKey = vars.CHANNEL_SECRET_KEY ? parseSecretKey(vars.CHANNEL_SECRET_KEY) : undefined;
  if (sealingKey === null) problems.push('CHANNEL_SECRET_KEY must be 32 bytes written as 64 hex digits or as base64 (openssl rand -hex 32)');
  const previousSealingKeys = (vars.CHANNEL_SECRET_KEY_PREVIOUS ?? '').split(',').map((k) => k.trim()).filter(Boolean).map(parseSecretKey);
  if (previousSealingKeys.includes(null)) problems.push('CHANNEL_SECRET_KEY_PREVIOUS must be keys of 32 bytes (64 hex digits or base64), separated by commas');
  // every secret variable (keys, tokens, passwords, OTLP headers, the database URL): none may hold a value the repository ships
  for (const variable of Object.keys(present).filter((name) => SECRET_VARIABLE.test(name))) {
    const problem = exampleSecretProblem(variable, present[variable], MADE_SECRETS.has(variable) ? 'made with openssl rand -hex 32' : 'the one its issuer (the vendor, the store, the database) gave you');
    if (problem) problems.push(problem);
  }
  const vendorCredentials = vendorSettings(present, vendors, problems);
  if (vars.STORAGE_DRIVER === 's3' && !vars.S3_BUCKET) problems.push('S3_BUCKET must be set when STORAGE_DRIVER=s3');
  if (vars.STORAGE_DRIVER !== 's3' && vars.MEDIA_DELIVERY === 'redirect') problems.push('MEDIA_DELIVERY=redirect needs STORAGE_DRIVER=s3 (only a bucket can hand out presigned URLs)');
  if ((vars.S3_ACCESS_KEY_ID === undefined) !== (vars.S3_SECRET_ACCESS_KEY === undefined)) problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together (or both left unset to use the AWS default credentials)');
  const trustProxy = parseTrustProxy(vars.TRUST_PROXY, problems);
  if (problems.length > 0) {
    throw new ConfigError(problems);
  }

  const dataDir = path.resolve(cwd, vars.DATA_DIR);
  return new AppConfig({
    port: vars.PORT,
    databaseUrl: vars.DATABASE_URL,
    dataDir,
    databasePoolSize: vars.DATABASE_POOL_SIZE,
    databasePoolTimeoutMs: vars.DATABASE_POOL_TIMEOUT_MS,
    workDir: vars.WORK_DIR ? path.resolve(cwd, vars.WORK_DIR) : path.join(dataDir, 'work'),
    bodyInflightMaxBytes: vars.BODY_INFLIGHT_MAX_BYTES,
    defaultLimits: {
      requestsPerMinute: vars.DEFAULT_REQUESTS_PER_MINUTE ?? null,
      maxConcurrentTasks: vars.DEFAULT_MAX_CONCURRENT_TASKS ?? null,
      monthlyCredits: vars.DEFAULT_MONTHLY_CREDITS ?? null,
    },
    kinds: kindConfigs,
    adminApiKey: vars.ADMIN_API_KEY,
    logLevel: vars.LOG_LEVEL,
    embeddedPgPort: vars.EMBEDDED_PG_PORT,
    authCacheTtlMs: vars.AUTH_CACHE_TTL_MS,
    metricsToken: vars.METRICS_TOKEN,
    authFailures: { limit: vars.AUTH_FAILURE_LIMIT, windowS: vars.AUTH_FAILURE_WINDOW_S },
    trustProxy: trustProxy ?? false,
    role: vars.ROLE,
    // one more job than cores: while one task waits on the database or the disk, the cores keep rendering
    workerConcurrency: vars.WORKER_CONCURRENCY ?? Math.max(2, availableParallelism() + 1),
    workerLeaseS: vars.WORKER_LEASE_S,
    holdRecheckS: vars.HOLD_RECHECK_S,
    heapGrowingPercent: vars.HEAP_GROWING_PERCENT,
    sandboxDelayMs: vars.SANDBOX_DELAY_MS,
    relay: {
      apiKey: vars.RELAY_API_KEY,
      vendorCredentials,
      circuit: { failureThreshold: vars.CHANNEL_FAILURE_THRESHOLD, openS: vars.CHANNEL_CIRCUIT_OPEN_S },
      testIntervalS: vars.CHANNEL_TEST_INTERVAL_S,
      pollMs: vars.RELAY_POLL_MS,
      concurrency: vars.RELAY_CONCURRENCY,
      pollPerChannel: vars.RELAY_POLL_PER_CHANNEL,
      upstreamAttempts: vars.RELAY_UPSTREAM_ATTEMPTS,
      failoverOnContent: vars.RELAY_FAILOVER_ON_CONTENT === 'true' || vars.RELAY_FAILOVER_ON_CONTENT === '1',
      callbackBaseUrl: vars.UPSTREAM_CALLBACK_BASE_URL?.replace(/\/+$/, ''),
      callbackPollS: vars.UPSTREAM_CALLBACK_POLL_S,
      billedCostTolerance: vars.BILLED_COST_TOLERANCE,
    },
    sealing: {
      key: sealingKey ?? undefined,
      previousKeys: previousSealingKeys.filter((k): k is Buffer => k !== null),
      keyFile: path.join(dataDir, 'sealing.key'),
    },
    outbound: {
      allowPrivate: vars.ALLOW_PRIVATE_URLS === 'true' || vars.ALLOW_PRIVATE_URLS === '1',
      // written as a URL's host may be: [v6] in brackets, a name with its final dot (as SafeFetch compares them)
      allowHosts: vars.OUTBOUND_ALLOW_HOSTS.split(',').map((h) => h.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')).filter(Boolean),
      connectTimeoutMs: vars.OUTBOUND_CONNECT_TIMEOUT_MS,
      timeoutMs: vars.OUTBOUND_TIMEOUT_MS,
    },
    audioMaxBytes: vars.AUDIO_MAX_BYTES,
    images: { maxSide: vars.IMAGE_MAX_SIDE, maxPixels: vars.IMAGE_MAX_PIXELS },
    ffmpegPath: vars.FFMPEG_PATH,
    resultUrlTtlS: vars.RESULT_URL_TTL_S,
    resultRetentionDays: vars.RESULT_RETENTION_DAYS,
    storageDriver: vars.STORAGE_DRIVER,
    s3:
      vars.STORAGE_DRIVER === 's3'
        ? {
            bucket: vars.S3_BUCKET!,
            endpoint: vars.S3_ENDPOINT?.replace(/\/+$/, ''),
            region: vars.S3_REGION,
            accessKeyId: vars.S3_ACCESS_KEY_ID,
            secretAccessKey: vars.S3_SECRET_ACCESS_KEY,
            // a custom endpoint (MinIO, a local fake) usually serves buckets by path, not by host name
            forcePathStyle: vars.S3_FORCE_PATH_STYLE === undefined ? vars.S3_ENDPOINT !== undefined : vars.S3_FORCE_PATH_STYLE === 'true' || vars.S3_FORCE_PATH_STYLE === '1',
            prefix: vars.S3_PREFIX && !vars.S3_PREFIX.endsWith('/') ? `${vars.S3_PREFIX}/` : (vars.S3_PREFIX ?? ''),
          }
        : undefined,
    mediaDelivery: vars.MEDIA_DELIVERY,
    mediaRedirectTtlS: vars.MEDIA_REDIRECT_TTL_S,
    shutdownTimeoutS: vars.SHUTDOWN_TIMEOUT_S,
    publicBaseUrl: vars.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    soleInstance: false,
    callbacks: {
      retryScheduleS: vars.CALLBACK_RETRY_SCHEDULE_S.split(',').map(Number),
      giveUpAfterS: vars.CALLBACK_GIVE_UP_AFTER_S,
      timeoutMs: vars.CALLBACK_TIMEOUT_MS,
      rotationOverlapS: vars.WEBHOOK_ROTATION_OVERLAP_S,
    },
    tracing: tracingConfig(vars),
  });
}

/** Tracing runs when an OTLP endpoint is set (the SDK's own rule) and OTEL_SDK_DISABLED is not true. */
function tracingConfig(vars: EnvironmentVariables): TracingConfig | undefined {
  const base = vars.OTEL_EXPORTER_OTLP_ENDPOINT;
  const traces = vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if ((!base && !traces) || vars.OTEL_SDK_DISABLED === 'true' || vars.OTEL_SDK_DISABLED === '1') return undefined;
  return {
    // as the specification says: the signal's own variable is the whole URL; the general one gets the signal's path
    tracesUrl: traces ?? `${base!.replace(/\/+$/, '')}/v1/traces`,
    headers: parseOtlpHeaders(vars.OTEL_EXPORTER_OTLP_HEADERS ?? ''),
    serviceName: vars.OTEL_SERVICE_NAME,
    sampler: vars.OTEL_TRACES_SAMPLER,
    samplerRatio: vars.OTEL_TRACES_SAMPLER_ARG === undefined ? 1 : Number(vars.OTEL_TRACES_SAMPLER_ARG),
    scheduleDelayMs: vars.OTEL_BSP_SCHEDULE_DELAY,
  };
}

function parseOtlpHeaders(raw: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    const at = pair.indexOf('=');
    if (at < 0) continue;
    const value = pair.slice(at + 1).trim();
    let decoded = value;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      // not percent-encoded: taken as it is
    }
    headers[pair.slice(0, at).trim()] = decoded;
  }
  return headers;
}
