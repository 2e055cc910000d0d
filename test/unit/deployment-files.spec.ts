import { existsSync, readFileSync } from 'node:fs';
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

  it('copies only files that exist', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1].split(/\s+/));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect([source, existsSync(new URL(source, root))]).toEqual([source, true]);
  });
});
