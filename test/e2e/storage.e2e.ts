import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createTestDatabase, startTestApp } from '../support/test-app.js';

describe('STORAGE_DRIVER=postgres', () => {
  it('keeps result files in PostgreSQL, where another instance serves them', async () => {
    const db = await createTestDatabase({ migrated: true });
    const writer = await startTestApp({ STORAGE_DRIVER: 'postgres' }, { db });
    try {
      const key = await writer.createKey();
      const created = await api(writer.url, 'POST', '/video-a/v1/images/editing/expand', {
        key,
        body: { image: (await png(300, 300)).toString('base64'), up_expansion_ratio: 0, bottom_expansion_ratio: 0, left_expansion_ratio: 1, right_expansion_ratio: 0, n: 2 },
      });
      const path_ = `/video-a/v1/images/editing/expand/${created.body.data.task_id}`;
      await pollUntil(() => api(writer.url, 'GET', path_, { key }), (r) => r.body.data.task_status === 'succeed');
      expect(existsSync(path.join(writer.config.dataDir, 'media'))).toBe(false);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const { rows } = await client.query("SELECT driver, count(*)::int AS n FROM media GROUP BY driver");
      const blobs = await client.query('SELECT count(*)::int AS n FROM media_blobs');
      await client.end();
      expect(rows).toEqual([{ driver: 'postgres', n: 2 }]);
      expect(blobs.rows[0].n).toBe(2);

      // a second instance with its own (empty) DATA_DIR reads them
      const reader = await startTestApp({ ROLE: 'api' }, { db });
      try {
        const task = await api(reader.url, 'GET', path_, { key });
        const file = await fetch(task.body.data.task_result.images[1].url);
        expect(file.status).toBe(200);
        expect((await sharp(Buffer.from(await file.arrayBuffer())).metadata()).width).toBe(600);
      } finally {
        await reader.close();
      }
    } finally {
      await writer.close();
      await db.drop();
    }
  });
});
