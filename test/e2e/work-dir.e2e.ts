import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkDirService } from '../../src/infra/workdir/work-dir.service.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp } from '../support/test-app.js';

describe("the service's work directory", () => {
  it('clears what a dead run left at start, keeps no file after a render, and is removed at stop', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-work-'));
    const work = path.join(dataDir, 'work');
    // a run that was killed mid-render: its process is gone, its files are not
    const deadPid = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const dead = path.join(work, `run-${deadPid}-deadbeef`);
    await mkdir(dead, { recursive: true });
    await writeFile(path.join(dead, 'clip-1.mp4'), 'half a video');
    // a run of another live process sharing the directory is left alone
    const live = path.join(work, `run-${process.ppid}-cafecafe`);
    await mkdir(live, { recursive: true });

    const t = await startTestApp({ DATA_DIR: dataDir });
    try {
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
      const own = t.app.get(WorkDirService).runDir;
      expect(existsSync(own)).toBe(true);

      const key = await t.createKey();
      const id = (await api(t.url, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'a slow zoom' } })).body.id;
      await pollUntil(() => api(t.url, 'GET', `/video-b/v1/generations/${id}`, { key }), (r) => r.body.state === 'completed', { timeoutMs: 60_000, what: 'the video' });
      expect(await readdir(own)).toEqual([]);
      await t.close();
      expect(existsSync(own)).toBe(false);
    } finally {
      await t.close().catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
