import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-0123456789';
const GEN = '/video-b/v1/generations';

/** GET /tasks, GET /tasks/{id}, GET /tasks/{id}/callbacks: every operation in one list, an owner's or (admin) everyone's. */
describe('the cross-operation task list', () => {
  let t: TestApp;
  let a: string;
  let b: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ ADMIN_API_KEY: ADMIN, ALLOW_PRIVATE_URLS: 'true', MUSIC_SANDBOX_DURATION_S: '2', DEFAULT_REQUESTS_PER_MINUTE: '1000' });
    a = await t.createKey('list-a');
    b = await t.createKey('list-b');
    ids.video = (await api(t.url, 'POST', GEN, { key: a, body: { prompt: 'A red kite', duration: '5s', callback_url: `${receiver.url}/hook` } })).body.id;
    ids.audio = (await api(t.url, 'POST', '/music-a/uploads/audio-url', { key: a, body: { url: `${t.url}/samples/clip.wav` } })).body.data;
    ids.expand = (await api(t.url, 'POST', '/video-a/v1/images/editing/expand', { key: a, body: { image: `${t.url}/samples/photo.png`, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0, external_task_id: 'order-7' } })).body.data.task_id;
    ids.other = (await api(t.url, 'POST', GEN, { key: b, body: { prompt: 'Not yours' } })).body.id;
    for (const id of Object.values(ids)) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await pollUntil(
      () => api(t.url, 'GET', '/tasks?limit=100', { key: ADMIN }),
      (r) => r.body.tasks.length === 4 && r.body.tasks.every((x: any) => x.state === 'succeeded' || x.state === 'failed'),
      { timeoutMs: 60_000, what: 'the four tasks to end' },
    );
  }, 90_000);
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it("shows a team key its own tasks of every operation, newest first, each linking to its operation's routes", async () => {
    const res = await api(t.url, 'GET', '/tasks', { key: a });
    expect(res.status).toBe(200);
    expect(res.body.tasks.map((x: any) => x.id)).toEqual([ids.expand, ids.audio, ids.video]);
    expect(res.body.next_cursor).toBeNull();
    const [expand, audio, video] = res.body.tasks;
    expect(video).toEqual({
      id: ids.video,
      kind: 'video',
      owner: 'list-a',
      state: 'succeeded',
      status: 'completed',
      external_id: null,
      created_at: expect.any(String),
      started_at: expect.any(String),
      finished_at: expect.any(String),
      message: null,
      credits: 5,
      door: 'luma',
      model: null,
      record_path: `${GEN}/${ids.video}`,
      callbacks_path: `${GEN}/${ids.video}/callbacks`,
    });
    expect([expand.kind, expand.status, expand.external_id, expand.record_path]).toEqual(['expand', 'succeed', 'order-7', `/video-a/v1/images/editing/expand/${ids.expand}`]);
    expect([audio.kind, audio.status, audio.record_path, audio.callbacks_path]).toEqual(['audio', 'ready', `/music-a/uploads/${ids.audio}`, null]);
    // the record_path answers with the same key
    expect((await api(t.url, 'GET', video.record_path, { key: a })).body.state).toBe('completed');
    // another team sees only its own
    expect((await api(t.url, 'GET', '/tasks', { key: b })).body.tasks.map((x: any) => x.id)).toEqual([ids.other]);
  });

  it('filters by operation, state, id or external id and creation time, and pages by cursor without gaps or repeats', async () => {
    const ids_ = async (query: string, key = a) => (await api(t.url, 'GET', `/tasks?${query}`, { key })).body.tasks.map((x: any) => x.id);
    expect(await ids_('kind=video')).toEqual([ids.video]);
    expect(await ids_('state=succeeded&kind=audio')).toEqual([ids.audio]);
    expect(await ids_('state=queued')).toEqual([]);
    expect(await ids_('q=order-7')).toEqual([ids.expand]);
    expect(await ids_(`q=${ids.audio}`)).toEqual([ids.audio]);
    expect(await ids_(`q=${ids.other}`)).toEqual([]); // another owner's id: not found among yours
    expect(await ids_('created_after=2000-01-01&created_before=2000-01-02')).toEqual([]);
    expect(await ids_(`created_after=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}`)).toHaveLength(3);
    expect(await ids_('kind=&state=&q=&owner=')).toHaveLength(3); // an empty field is no filter

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await api(t.url, 'GET', `/tasks?limit=1${cursor ? `&cursor=${cursor}` : ''}`, { key: a });
      seen.push(...res.body.tasks.map((x: any) => x.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual([ids.expand, ids.audio, ids.video]);
  });

  it('gives the admin every owner, with the owner filter; a team key naming another owner gets 403', async () => {
    expect((await api(t.url, 'GET', '/tasks', { key: ADMIN })).body.tasks.map((x: any) => x.id)).toEqual([ids.other, ids.expand, ids.audio, ids.video]);
    expect((await api(t.url, 'GET', '/tasks?owner=list-b', { key: ADMIN })).body.tasks.map((x: any) => x.id)).toEqual([ids.other]);
    const refused = await api(t.url, 'GET', '/tasks?owner=list-b', { key: a });
    expect([refused.status, refused.body.code, refused.body.message]).toEqual([403, 1103, expect.stringMatching(/^owner is an admin filter/)]);
    expect((await api(t.url, 'GET', '/tasks?owner=list-a', { key: a })).status).toBe(200);
    expect((await api(t.url, 'GET', '/tasks')).status).toBe(401);
  });

  it('refuses bad query values with 400 naming each field and rule', async () => {
    const bad = async (query: string) => {
      const res = await api(t.url, 'GET', `/tasks?${query}`, { key: a });
      expect([query, res.status, res.body.code]).toEqual([query, 400, 1201]);
      return res.body.message as string;
    };
    expect(await bad('limit=0')).toMatch(/limit must be a whole number from 1 to 100/);
    expect(await bad('limit=101&state=done')).toMatch(/limit must be a whole number from 1 to 100; state must be one of queued, running, succeeded, failed|state must be one of queued, running, succeeded, failed.*limit must be/);
    expect(await bad('kind=painting')).toBe('kind must be one of expand, video, audio, music, concat, image, speech, lyrics, stems, wav (got painting)');
    expect(await bad('kind=Bad%20Kind')).toMatch(/kind must be an operation name/);
    expect(await bad('created_after=yesterday')).toMatch(/created_after must be an ISO 8601 date/);
    expect(await bad('created_after=2026-11-02&created_before=2026-11-01')).toBe('created_after must be before created_before');
    expect(await bad('cursor=not-a-cursor')).toMatch(/cursor must be the next_cursor of a page of this list/);
    expect(await bad(`cursor=${Buffer.from('2026-11-01T00:00:00.000Z|x').toString('base64url')}`)).toMatch(/cursor must be/);
    expect(await bad(`owner=${encodeURIComponent('a b')}`)).toMatch(/owner may contain only/);
    expect(await bad(`q=${'x'.repeat(257)}`)).toMatch(/q must be 1 to 256 characters long/);
    // a whole number in decimal digits only: hexadecimal, exponents and blanks are not read as numbers
    for (const limit of ['0x10', '1e1', '%20%205', '5.0']) expect(await bad(`limit=${limit}`)).toMatch(/limit must be a whole number from 1 to 100/);
    expect((await api(t.url, 'GET', '/tasks?limit=100', { key: a })).status).toBe(200);
    // an empty limit is the default, as every empty filter is no filter
    for (const empty of ['limit=', 'limit']) expect((await api(t.url, 'GET', `/tasks?${empty}`, { key: a })).status).toBe(200);
    // a parameter in bracket form would be dropped as unknown, and its filter not applied: refused, naming it
    expect(await bad('kind=video&state[x]=failed')).toBe('state must be one value, sent as state=<value> (not state[x])');
    expect(await bad('kind[]=video')).toBe('kind must be one value, sent as kind=<value> (not kind[])');
    // a parameter sent twice is refused saying so, not as a value of the wrong type
    expect(await bad('kind=video&kind=speech')).toBe('kind must be one value, sent once (it was sent 2 times)');
    expect(await bad('limit=1&limit=2&limit=3')).toBe('limit must be one value, sent once (it was sent 3 times)');
    // a key in bracket form that is no parameter is dropped as any unknown key is
    expect((await api(t.url, 'GET', '/tasks?nothing[x]=1', { key: a })).status).toBe(200);
  });

  it("shows one task with its timeline, media as signed links and its operation's record; another owner's is 404, the admin sees any", async () => {
    const res = await api(t.url, 'GET', `/tasks/${ids.video}`, { key: a });
    expect(res.status).toBe(200);
    expect(res.body.timeline.map((e: any) => [e.state, e.status])).toEqual([
      ['queued', 'pending'],
      ['running', 'dreaming'],
      ['succeeded', 'completed'],
    ]);
    // the record as the operation's own route answers it (its links are signed afresh at each read)
    const own = (await api(t.url, 'GET', `${GEN}/${ids.video}`, { key: a })).body;
    expect(Object.keys(res.body.record).sort()).toEqual(Object.keys(own).sort());
    expect(res.body.record).toEqual(expect.objectContaining({ id: ids.video, state: 'completed', request: own.request, assets: { video: expect.any(String), image: expect.any(String) } }));
    const video = res.body.media.find((m: any) => m.role === 'video');
    expect(video).toEqual(expect.objectContaining({ content_type: 'video/mp4', url: expect.stringMatching(new RegExp(`^${t.url}/media/[0-9a-f-]{36}\\?expires=\\d+&signature=`)) }));
    const file = await fetch(video.url, { headers: { range: 'bytes=0-99' } });
    expect([file.status, file.headers.get('content-range')]).toEqual([206, expect.stringMatching(/^bytes 0-99\/\d+$/)]);

    const audio = (await api(t.url, 'GET', `/tasks/${ids.audio}`, { key: a })).body;
    expect(audio.record).toEqual(expect.objectContaining({ id: ids.audio, status: 'ready' }));
    expect(audio.media.map((m: any) => m.content_type)).toEqual([expect.stringMatching(/^audio\//)]);

    for (const id of [ids.other, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const missing = await api(t.url, 'GET', `/tasks/${id}`, { key: a });
      expect([id, missing.status, missing.body.code]).toEqual([id, 404, 1203]);
    }
    expect((await api(t.url, 'GET', `/tasks/${ids.other}`, { key: ADMIN })).body.owner).toBe('list-b');
  });

  it('lists callback deliveries with every attempt, for the owner and the admin', async () => {
    const log = await pollUntil(
      () => api(t.url, 'GET', `/tasks/${ids.video}/callbacks`, { key: a }),
      (r) => r.body.deliveries?.length === 2 && r.body.deliveries.every((d: any) => d.state === 'delivered'),
      { what: 'both notifications delivered' },
    );
    expect(log.body.deliveries.map((d: any) => [d.status, d.attempt_log.map((x: any) => x.status_code)])).toEqual([
      ['dreaming', [200]],
      ['completed', [200]],
    ]);
    expect((await api(t.url, 'GET', `/tasks/${ids.video}/callbacks`, { key: ADMIN })).body).toEqual(log.body);
    expect((await api(t.url, 'GET', `/tasks/${ids.video}/callbacks`, { key: b })).status).toBe(404);
  });

  it('reports usage this month by day and operation, and refusals by code', async () => {
    await api(t.url, 'PUT', '/admin/owners/list-b/limits', { key: ADMIN, body: { monthly_credits: 0 } });
    const refused = await api(t.url, 'POST', GEN, { key: b, body: { prompt: 'Over the limit' } });
    expect([refused.status, refused.body.code]).toEqual([429, 1102]);
    const usage = await pollUntil(
      () => api(t.url, 'GET', '/usage', { key: b }),
      (r) => r.body.refusals?.find((x: any) => x.code === 1102)?.count === 1,
      { timeoutMs: 10_000, what: 'the refusal to be counted' },
    );
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.body.refusals).toEqual([
      { code: 1302, name: 'rate_limited', count: 0 },
      { code: 1303, name: 'concurrency_limited', count: 0 },
      { code: 1102, name: 'resource_pack_exhausted', count: 1 },
    ]);
    expect(usage.body.days).toEqual([expect.objectContaining({ day: today, operation: 'video', accepted: 1, succeeded: 1 })]);
    const admin = await api(t.url, 'GET', '/admin/usage', { key: ADMIN });
    expect(admin.body.refusals).toEqual([{ day: today, owner: 'list-b', code: 1102, count: 1 }]);
    const [row] = await queryDb<{ count: number }>(t.db, "SELECT count FROM limit_refusals WHERE owner = 'list-b'");
    expect(row.count).toBe(1);
  });

  /** Item 8 of issue 56: what each task asked, in the gateway's words, the door it came through and its model; the list filtered by both. */
  describe('what a task asked, its door and model', () => {
    let c: string;
    const mine: Record<string, string> = {};

    beforeAll(async () => {
      c = await t.createKey('list-c');
      const frame = (await png(640, 360)).toString('base64');
      mine.kling = (await api(t.url, 'POST', '/video-a/v1/videos/image2video', { key: c, body: { model_name: 'kling-v1-6', prompt: 'A kite, from here', image: frame, mode: 'std', duration: '5' } })).body.data.task_id;
      mine.luma = (await api(t.url, 'POST', GEN, { key: c, body: { prompt: 'A kite at dusk', model: 'ray-flash-2', aspect_ratio: '9:16', resolution: '720p', duration: '5s' } })).body.id;
      mine.expand = (await api(t.url, 'POST', '/video-a/v1/images/editing/expand', { key: c, body: { image: `${t.url}/samples/photo.png`, prompt: 'more sky', up_expansion_ratio: 0.5, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 } })).body.data.task_id;
      for (const id of Object.values(mine)) expect(id).toMatch(/^[0-9a-f-]{36}$/);
      await pollUntil(
        () => api(t.url, 'GET', '/tasks', { key: c }),
        (r) => r.body.tasks.length === 3 && r.body.tasks.every((x: any) => x.state === 'succeeded'),
        { timeoutMs: 60_000, what: "list-c's three tasks to succeed" },
      );
    }, 90_000);

    const listed = async (query: string, key = c) => (await api(t.url, 'GET', `/tasks?${query}`, { key })).body.tasks.map((x: any) => x.id);

    it('names each task\'s door (stored, or the one door of its operation) and model in the list, and filters by them, with the keyset paging', async () => {
      const all = (await api(t.url, 'GET', '/tasks', { key: c })).body.tasks;
      expect(all.map((x: any) => [x.id, x.door, x.model])).toEqual([
        [mine.expand, 'kling', null],
        [mine.luma, 'luma', 'ray-flash-2'],
        [mine.kling, 'kling', 'kling-v1-6'],
      ]);
      expect(await listed('door=kling')).toEqual([mine.expand, mine.kling]); // expand stores no door: Kling's is its only one
      expect(await listed('door=luma')).toEqual([mine.luma]);
      expect(await listed('door=suno')).toEqual([]);
      expect(await listed('door=suno', a)).toEqual([ids.audio]); // an upload's one door
      expect(await listed('model=kling-v1-6')).toEqual([mine.kling]);
      expect(await listed('model=ray-flash-2&door=luma&kind=video&state=succeeded')).toEqual([mine.luma]);
      expect(await listed('model=ray-flash-2&door=kling')).toEqual([]);
      expect(await listed('model=ray-2')).toEqual([]);
      expect(await listed('door=&model=')).toHaveLength(3); // an empty field is no filter
      // the admin: every owner's tasks through a door, and a cursor keeps the filters' order without gaps
      const first = (await api(t.url, 'GET', '/tasks?door=kling&limit=1', { key: ADMIN })).body;
      expect(first.tasks.map((x: any) => x.id)).toEqual([mine.expand]);
      const second = (await api(t.url, 'GET', `/tasks?door=kling&limit=5&cursor=${first.next_cursor}`, { key: ADMIN })).body;
      expect(second.tasks.map((x: any) => x.id)).toEqual([mine.kling, ids.expand]);
      expect(second.next_cursor).toBeNull();
    });

    it('refuses a door or model that is not a name, with 400 naming the field', async () => {
      const bad = async (query: string) => {
        const res = await api(t.url, 'GET', `/tasks?${query}`, { key: c });
        expect([query, res.status, res.body.code]).toEqual([query, 400, 1201]);
        return res.body.message as string;
      };
      expect(await bad('door=Kling')).toMatch(/^door must be the name of a door, such as luma, kling, openai or suno/);
      expect(await bad(`door=${'k'.repeat(33)}`)).toMatch(/^door must be the name of a door/);
      expect(await bad(`model=${encodeURIComponent('ray 2')}`)).toMatch(/^model must be a model name, as GET \/models lists them/);
      expect(await bad(`model=${'m'.repeat(65)}`)).toMatch(/^model must be a model name/);
      expect(await bad('door=luma&door=kling')).toBe('door must be one value, sent once (it was sent 2 times)'); // one door, not a list
    });

    it("shows a task's request in the gateway's words beside its result, its door, and its input images apart as signed links", async () => {
      const kling = (await api(t.url, 'GET', `/tasks/${mine.kling}`, { key: c })).body;
      expect([kling.door, kling.model]).toEqual(['kling', 'kling-v1-6']);
      expect(kling.request).toEqual({ prompt: 'A kite, from here', loop: false, resolution: '720p', durationS: 5, model: 'kling-v1-6', firstFrame: { type: 'image', upload: true } });
      expect(kling.inputs).toEqual([{ id: expect.any(String), role: 'frame0', index: 0, content_type: 'image/png', size_bytes: expect.any(Number), url: expect.stringMatching(new RegExp(`^${t.url}/media/[0-9a-f-]{36}\\?expires=\\d+&signature=`)) }]);
      const frame = await fetch(kling.inputs[0].url);
      expect([frame.status, frame.headers.get('content-type')]).toEqual([200, 'image/png']);
      expect(kling.media.map((m: any) => m.role).sort()).toEqual(['thumbnail', 'video']);

      const luma = (await api(t.url, 'GET', `/tasks/${mine.luma}`, { key: c })).body;
      expect([luma.door, luma.model, luma.inputs]).toEqual(['luma', 'ray-flash-2', []]);
      expect(luma.request).toEqual({ prompt: 'A kite at dusk', model: 'ray-flash-2', aspectRatio: '9:16', resolution: '720p', durationS: 5, loop: false });

      // expand: the gateway's facts of its input image are not what was asked
      const expand = (await api(t.url, 'GET', `/tasks/${mine.expand}`, { key: c })).body;
      expect([expand.door, expand.model]).toEqual(['kling', null]);
      expect(expand.request).toEqual(expect.objectContaining({ image_url: `${t.url}/samples/photo.png`, prompt: 'more sky', up_ratio: 0.5, n: 1 }));
      expect(Object.keys(expand.request).filter((k) => k.startsWith('image_') && k !== 'image_url')).toEqual([]);

      // an upload: its URL is what it asked; the admin sees the same view
      const audio = (await api(t.url, 'GET', `/tasks/${ids.audio}`, { key: ADMIN })).body;
      expect([audio.door, audio.request, audio.inputs]).toEqual(['suno', { url: `${t.url}/samples/clip.wav` }, []]);
    });
  });
});
