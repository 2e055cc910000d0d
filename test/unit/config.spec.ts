import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/infra/config/app-config.js';

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
});
