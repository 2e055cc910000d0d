import { adminQuery, api, createTestDatabase, startTestApp } from '../support/test-app.js';

describe('health', () => {
  it('answers /health and /health/ready without a key while the database answers', async () => {
    const t = await startTestApp();
    try {
      const live = await api(t.url, 'GET', '/health');
      expect(live.status).toBe(200);
      expect(live.body.status).toBe('ok');
      const ready = await api(t.url, 'GET', '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details.database.status).toBe('up');
      // a bad key on a public route does not matter
      expect((await api(t.url, 'GET', '/health/ready', { key: 'nonsense' })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('answers /health/ready with 503/5001 when the database is gone, while /health stays up', async () => {
    const db = await createTestDatabase();
    const t = await startTestApp({}, { db });
    try {
      await adminQuery(`DROP DATABASE ${db.name} WITH (FORCE)`);
      const ready = await api(t.url, 'GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ code: 5001, message: 'Not ready: the database does not answer', request_id: ready.headers.get('x-request-id') });
      expect((await api(t.url, 'GET', '/health')).status).toBe(200);
    } finally {
      await t.close().catch(() => undefined);
      await db.drop();
    }
  });
});
