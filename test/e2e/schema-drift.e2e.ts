import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { applyMigrations } from '../../src/infra/database/migrator.js';
import { actualShape, diffShapes, expectedShape } from '../support/schema-shape.js';
import { createTestDatabase, type TestDatabase } from '../support/test-app.js';

const quiet = { info: () => undefined, warn: () => undefined };

describe('schema.prisma and prisma/migrations agree', () => {
  let db: TestDatabase;
  let client: pg.Client;
  let schema: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    await applyMigrations(db.url, quiet);
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    schema = await readFile(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8');
  });
  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  it('has no drift: every table, column, type, index, unique constraint and foreign key matches', async () => {
    expect(diffShapes(expectedShape(schema), await actualShape(client))).toEqual([]);
  });

  it('detects a column or index that only schema.prisma has', async () => {
    const edited = schema.replace(/model ApiKey \{/, 'model ApiKey {\n  extra Int\n  @@index([name])');
    const problems = diffShapes(expectedShape(edited), await actualShape(client));
    expect(problems).toEqual(
      expect.arrayContaining([
        'api_keys.extra: schema.prisma has integer not null, the database has nothing',
        'api_keys: normal(name) is in schema.prisma only',
      ]),
    );
  });

  it('detects a column, type change or unique constraint that only the database has', async () => {
    await client.query('BEGIN');
    try {
      await client.query('ALTER TABLE api_keys ADD COLUMN stray integer, ALTER COLUMN name TYPE text, ADD CONSTRAINT u UNIQUE (owner, name)');
      const problems = diffShapes(expectedShape(schema), await actualShape(client));
      expect(problems).toEqual(
        expect.arrayContaining([
          'api_keys.stray: schema.prisma has nothing, the database has integer',
          'api_keys.name: schema.prisma has character varying(128) not null, the database has text not null',
          'api_keys: unique(owner,name) is in the database only',
        ]),
      );
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
