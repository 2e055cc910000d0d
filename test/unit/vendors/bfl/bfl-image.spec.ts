import { UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { BFL_IMAGE_MODELS, BflImageVendor, bflCall, bflCreated, bflRefusal, bflStatus, freeSize, sameService, sizeFields } from '../../../../src/vendors/bfl/bfl-image.vendor.js';
import { BFL } from '../../../../src/vendors/bfl/bfl.vendor.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { imageInput, imageRequest, modelOf } from '../image-fixtures.js';

const BASE = 'https://api.bfl.ai';
const FLUX_2_PRO = modelOf(BFL_IMAGE_MODELS, 'flux-2-pro');
const KONTEXT = modelOf(BFL_IMAGE_MODELS, 'flux-kontext-pro');
const PRO_11 = modelOf(BFL_IMAGE_MODELS, 'flux-pro-1.1');
const FILL = modelOf(BFL_IMAGE_MODELS, 'flux-pro-1.0-fill');

/**
 * Black Forest Labs' FLUX API (docs.bfl.ai, api.bfl.ai/openapi.json): `POST /v1/{model}` answers `{id,
 * polling_url}`, `GET {polling_url}` answers `{id, status, result: {sample}, details}`; its 422 is FastAPI's.
 */
describe('BFL: request mapping', () => {
  it('takes its protocol and poll floor from its descriptor', () => {
    expect(BflImageVendor.protocol).toBe(BFL.protocol);
  });

  it("FLUX.2: prompt, input images as input_image, input_image_2 (Base64), width and height, seed, PNG, webhook_url", () => {
    const [a, b] = [imageInput(800, 600), imageInput(400, 400, 'jpeg')];
    const call = bflCall(FLUX_2_PRO, imageRequest({ images: 2, size: '1024x768', seed: 7 }), [a, b], undefined, 'https://gw.example/upstream-callbacks/x/y');
    expect(call).toEqual({
      path: '/v1/flux-2-pro',
      body: { prompt: 'A lighthouse at dusk', input_image: a.bytes.toString('base64'), input_image_2: b.bytes.toString('base64'), width: 1024, height: 768, seed: 7, output_format: 'png', webhook_url: 'https://gw.example/upstream-callbacks/x/y' },
    });
  });

  it('a JPEG asked is asked of BFL as JPEG; anything else as PNG (the gateway converts)', () => {
    expect(bflCall(FLUX_2_PRO, imageRequest({ outputFormat: 'jpeg' }), [], undefined, undefined).body).toEqual({ prompt: 'A lighthouse at dusk', output_format: 'jpeg' });
    expect(bflCall(FLUX_2_PRO, imageRequest({ outputFormat: 'webp' }), [], undefined, undefined).body).toEqual({ prompt: 'A lighthouse at dusk', output_format: 'png' });
  });

  it('Kontext: aspect_ratio, the asked one or the asked size’s shape', () => {
    expect(bflCall(KONTEXT, imageRequest({ aspectRatio: '21:9' }), [], undefined, undefined).body).toEqual({ prompt: 'A lighthouse at dusk', aspect_ratio: '21:9', output_format: 'png' });
    expect(sizeFields(KONTEXT, imageRequest({ size: '1920x1080' }))).toEqual({ aspect_ratio: '16:9' });
    expect(sizeFields(KONTEXT, imageRequest())).toEqual({});
  });

  it('a free size from a shape and class: about 1 MP at 1k, within the rule (FLUX1.1: multiples of 32 to 1440)', () => {
    expect(sizeFields(PRO_11, imageRequest({ aspectRatio: '3:2' }))).toEqual({ width: 1248, height: 832 });
    expect(sizeFields(FLUX_2_PRO, imageRequest({ resolution: '2k' }))).toEqual({ width: 2048, height: 2048 });
    expect(sizeFields(FLUX_2_PRO, imageRequest({ aspectRatio: '9:16', resolution: '2k' }))).toEqual({ width: 1152, height: 2048 });
    expect(sizeFields(FLUX_2_PRO, imageRequest())).toEqual({});
    expect(freeSize('1:1', '1k', { multipleOf: 16, minSide: 64, maxSide: 2048, maxPixels: 2048 * 2048 })).toEqual({ width: 1024, height: 1024 });
  });

  it("Fill: the image and the mask painted white where it paints; no size; no generation", () => {
    const image = imageInput(640, 480);
    const painted = Buffer.from('painted mask');
    expect(bflCall(FILL, imageRequest({ mode: 'edit', images: 1, mask: true, size: '640x480' }), [image], painted, undefined)).toEqual({ path: '/v1/flux-pro-1.0-fill', body: { prompt: 'A lighthouse at dusk', image: image.bytes.toString('base64'), mask: painted.toString('base64'), output_format: 'png' } });
    expect(bflCall(FILL, imageRequest({ mode: 'edit', images: 1 }), [image], undefined, undefined).body).toEqual({ prompt: 'A lighthouse at dusk', image: image.bytes.toString('base64'), output_format: 'png' });
    expect(() => bflCall(FILL, imageRequest(), [], undefined, undefined)).toThrow(/only edits an image/);
    expect(() => bflCall(FILL, imageRequest({ mode: 'edit' }), [], undefined, undefined)).toThrow(/needs the image it edits/);
  });
});

describe('BFL: answer reading', () => {
  it('a create: its polling_url is the upstream id (a regional host of the same domain too)', () => {
    const answer = { id: 'b7e5c1f2-0000-4000-8000-000000000001', polling_url: 'https://api.us1.bfl.ai/v1/get_result?id=b7e5c1f2-0000-4000-8000-000000000001' };
    expect(bflCreated(answer, BASE)).toBe(answer.polling_url);
  });

  it('a create answered without a polling_url (with a webhook_url): its get_result on the channel', () => {
    expect(bflCreated({ id: 'a b', status: 'Pending', webhook_url: 'https://gw.example/cb' }, BASE)).toBe(`${BASE}/v1/get_result?id=a%20b`);
  });

  it('a create without an id names the field; a polling_url elsewhere is refused (the key would go there)', () => {
    expect(() => bflCreated({ polling_url: `${BASE}/v1/get_result?id=x` }, BASE)).toThrow(new UnusableAnswer('the upstream answered the create request without a usable id (expected string, received undefined)'));
    expect(() => bflCreated({ id: '' }, BASE)).toThrow(/without a usable id/);
    expect(() => bflCreated({ id: 'x', polling_url: 'https://evil.example/v1/get_result?id=x' }, BASE)).toThrow(/polling_url outside its own domain/);
  });

  it('sameService: the same host, or a host of the same domain over HTTPS; never an IP of another host or a URL with credentials', () => {
    expect(sameService(BASE, 'https://api.eu1.bfl.ai/v1/get_result?id=1')).toBe(true);
    expect(sameService('http://127.0.0.1:8080', 'http://127.0.0.1:8080/v1/get_result?id=1')).toBe(true);
    expect(sameService('http://127.0.0.1:8080', 'http://127.0.0.2:8080/v1/get_result?id=1')).toBe(false);
    expect(sameService(BASE, 'https://user:pw@api.bfl.ai/x')).toBe(false);
    expect(sameService('https://api.bfl.ai', 'http://api.us1.bfl.ai/x')).toBe(false);
    expect(sameService(BASE, 'not a url')).toBe(false);
  });

  it('a poll: Ready with its sample; Pending, Reasoning, Generating and unknown states working', () => {
    expect(bflStatus({ id: 'x', status: 'Ready', result: { sample: 'https://delivery-us1.bfl.ai/results/x/sample.png', prompt: 'p', seed: 1, duration: 9.1 }, progress: null, details: null })).toEqual({ state: 'succeeded', images: [{ url: 'https://delivery-us1.bfl.ai/results/x/sample.png' }] });
    for (const status of ['Pending', 'Reasoning', 'Generating', 'Queued']) expect(bflStatus({ id: 'x', status, result: null, progress: 0.4 })).toEqual({ state: 'working' });
  });

  it('moderated: a content failure in its words; Error and Failed its own; Task not found; Ready without a sample', () => {
    expect(bflStatus({ status: 'Content Moderated', details: { 'Moderation Reasons': ['Derivative Works Filter'] } })).toEqual({ state: 'failed', reason: 'Content Moderated (Moderation Reasons: Derivative Works Filter)' });
    expect(bflStatus({ status: 'Request Moderated', details: { 'Moderation Reasons': ['Content'], score: 0.9, nested: {} } })).toEqual({ state: 'failed', reason: 'Request Moderated (Moderation Reasons: Content; score: 0.9)' });
    expect(bflStatus({ status: 'Error', details: 'the generation failed' })).toEqual({ state: 'failed', reason: 'the task ended in Error: the generation failed' });
    expect(bflStatus({ status: 'Failed', details: {} })).toEqual({ state: 'failed', reason: 'the task ended in Failed' });
    expect(bflStatus({ status: 'Task not found' })).toEqual({ state: 'failed', reason: 'the upstream no longer has the task (Task not found)' });
    expect(bflStatus({ status: 'Ready', result: { sample: '' } })).toEqual({ state: 'failed', reason: 'the upstream reported the task ready without a sample (result.sample)' });
    expect(bflStatus({ status: 'Ready', result: 'odd' })).toEqual({ state: 'failed', reason: 'the upstream reported the task ready without a sample (result.sample)' });
  });

  it('a poll without a status names the field', () => {
    expect(() => bflStatus({ id: 'x', result: null })).toThrow(new UnusableAnswer('the upstream answered the poll without a usable status (expected string, received undefined)'));
    expect(() => bflStatus(['Ready'])).toThrow(/without a usable answer \(expected object, received array\)/);
  });

  it("its 422 in its own words (FastAPI's detail list); other answers left to the status", () => {
    const refused = bflRefusal(422, { detail: [{ loc: ['body', 'width'], msg: 'must be a multiple of 32 from 256 to 1440', type: 'value_error' }, { msg: 'and one more' }, {}] });
    expect([refused instanceof UpstreamRefused, refused?.kind, refused?.message]).toEqual([true, 'request', 'width: must be a multiple of 32 from 256 to 1440; and one more']);
    expect(bflRefusal(422, { detail: [] })?.message).toBe('HTTP 422');
    expect(bflRefusal(422, { detail: 'not a list' })).toBeUndefined();
    expect(bflRefusal(402, { detail: 'Insufficient credits' })).toBeUndefined();
  });
});
