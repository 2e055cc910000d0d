import { jwtVerify } from 'jose';
import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { klingAuth } from '../../../../src/vendors/kling/kling-auth.js';
import { isKlingNotFound, klingEnvelopeData, klingRefusal } from '../../../../src/vendors/kling/kling-envelope.js';
import { klingCreatedTask, klingImagesStatus, klingQueriedTask } from '../../../../src/vendors/kling/kling-tasks.js';
import { thrown } from '../adapter-kit.js';

describe("Kling's wire helpers", () => {
  it('its JWT as its sample mints it (HS256, iss the access key, 30 min, from 5 s before), reused; none without keys', async () => {
    const auth = klingAuth('ak-1', 'sk-1');
    const { authorization } = (await auth.headers()) as { authorization: string };
    const { payload, protectedHeader } = await jwtVerify(authorization.replace('Bearer ', ''), new TextEncoder().encode('sk-1'), { issuer: 'ak-1' });
    expect([protectedHeader.alg, protectedHeader.typ, payload.exp! - payload.nbf!]).toEqual(['HS256', 'JWT', 1805]);
    expect(await auth.headers()).toEqual({ authorization });
    expect(await klingAuth('ak-1', undefined).headers()).toEqual({});
  });

  it('the envelope: data on code 0; busy codes; server errors; credentials, account and request refusals; a code that is not a number named', async () => {
    expect(klingEnvelopeData({ code: 0, message: 'SUCCEED', data: { task_id: 'x' } })).toEqual({ task_id: 'x' });
    expect(klingEnvelopeData({ code: 0, data: [] })).toBeNull();
    expect(await thrown(() => klingEnvelopeData({ code: 1302, message: 'API request too fast' }))).toBeInstanceOf(UpstreamBusy);
    expect(await thrown(() => klingEnvelopeData({ code: 5002 }))).toMatchObject({ ambiguous: true, message: 'the upstream failed: code 5002' });
    expect(await thrown(() => klingEnvelopeData({ code: 1000, message: 'Authentication failed' }))).toMatchObject({ kind: 'auth' });
    expect(await thrown(() => klingEnvelopeData({ code: 1101, message: 'Account in arrears' }))).toMatchObject({ kind: 'account' });
    expect(await thrown(() => klingEnvelopeData({ code: 1301, message: 'Trigger the content security policy' }))).toMatchObject({ kind: 'request', message: 'Trigger the content security policy (code 1301)' });
    expect((await thrown(() => klingEnvelopeData({ code: '0' }))).message).toMatch(/the request without a usable code/);
  });

  it('its account codes under 429 refuse the account; not found is 404 or 400', () => {
    expect(klingRefusal(429, { code: 1102, message: 'resource pack exhausted' })).toMatchObject({ kind: 'account', status: 429 });
    expect(klingRefusal(429, { code: 1302 })).toBeUndefined();
    expect([isKlingNotFound(new UpstreamRefused('x', 404)), isKlingNotFound(new UpstreamRefused('x', 400)), isKlingNotFound(new UpstreamRefused('x', 401)), isKlingNotFound(new Error('x'))]).toEqual([true, true, false, false]);
  });

  it('a created task needs its task_id; a queried one its data', async () => {
    expect(klingCreatedTask({ code: 0, data: { task_id: '86', task_status: 'submitted' } })).toEqual({ task_id: '86', task_status: 'submitted' });
    expect((await thrown(() => klingCreatedTask({ code: 0, data: { task_id: '' } }))).message).toMatch(/task_id/);
    expect((await thrown(() => klingCreatedTask({ code: 0, data: null }))).message).toMatch(/task_id/);
    expect((await thrown(() => klingQueriedTask({ code: 0, data: null }))).message).toBe('the upstream answered the query without data');
  });

  it('an image task: its images in order, its failure in words, else working; malformed named', async () => {
    const url = (i: { url: string }) => i.url;
    expect(klingImagesStatus({ task_status: 'succeed', task_result: { images: [{ index: 1, url: 'b' }, { index: 0, url: 'a' }] } }, url)).toEqual({ state: 'succeeded', images: ['a', 'b'] });
    expect(klingImagesStatus({ task_status: 'succeed', task_result: { images: [{ index: 0 }] } }, url)).toEqual({ state: 'failed', reason: 'it reported success without result images' });
    expect(klingImagesStatus({ task_status: 'failed', task_status_msg: 'Failure to pass the risk control system' }, url)).toEqual({ state: 'failed', reason: 'Failure to pass the risk control system' });
    expect(klingImagesStatus({ task_status: 'failed' }, url)).toEqual({ state: 'failed', reason: 'no reason given' });
    expect(klingImagesStatus({ task_status: 'processing' }, url)).toEqual({ state: 'working' });
    expect((await thrown(() => klingImagesStatus({ task_status: 'succeed', task_result: { images: 'a' } } as never, url))).message).toMatch(/task_result\.images/);
  });
});
