import 'reflect-metadata';
import path from 'node:path';
import { plainToInstance } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, validateSync } from 'class-validator';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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

  @IsOptional() @IsString() @MinLength(16, { message: 'ADMIN_API_KEY must be at least 16 characters long' }) @MaxLength(512)
  ADMIN_API_KEY?: string;

  @IsOptional() @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @IsOptional() @IsInt() @Min(1) @Max(65535)
  EMBEDDED_PG_PORT: number = 54329;

  @IsOptional() @IsInt() @Min(0) @Max(60_000)
  AUTH_CACHE_TTL_MS: number = 2000;
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
  readonly embeddedPgPort!: number;
  /** How long a key lookup may be served from memory; a revoked key stops working within this time. */
  readonly authCacheTtlMs!: number;

  constructor(values: AppConfigValues) {
    Object.assign(this, values);
  }

  /** A copy with some settings replaced (used where the database URL is only known after start-up). */
  with(overrides: Partial<AppConfig>): AppConfig {
    return new AppConfig({ ...this, ...overrides });
  }
}

export type AppConfigValues = Omit<AppConfig, 'with'>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validates the environment once; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined>, cwd = process.cwd()): AppConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const vars = plainToInstance(EnvironmentVariables, present, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors = validateSync(vars, { whitelist: false, skipMissingProperties: false });
  if (errors.length > 0) {
    const problems = errors.flatMap((e) =>
      Object.values(e.constraints ?? {}).map((msg) => `${msg} (got ${JSON.stringify(present[e.property])})`),
    );
    throw new ConfigError(problems);
  }
  return new AppConfig({
    port: vars.PORT,
    databaseUrl: vars.DATABASE_URL,
    dataDir: path.resolve(cwd, vars.DATA_DIR),
    adminApiKey: vars.ADMIN_API_KEY,
    logLevel: vars.LOG_LEVEL,
    embeddedPgPort: vars.EMBEDDED_PG_PORT,
    authCacheTtlMs: vars.AUTH_CACHE_TTL_MS,
  });
}
