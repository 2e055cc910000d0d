import type { ExpandRequest } from '../../../../src/vendors/contracts/expand-vendor.js';
import { KlingExpandVendor, klingExpandBody, klingExpandStatus } from '../../../../src/vendors/kling/kling-expand.vendor.js';
import { KLING_IMAGE_MODELS, KlingImageVendor, klingImageBody, klingImageStatus, shapeFields, unmetByKling } from '../../../../src/vendors/kling/kling-image.vendor.js';
import { KLING } from '../../../../src/vendors/kling/kling.vendor.js';
import { imageInput, imageRequest, modelOf } from '../image-fixtures.js';

const V1_5 = modelOf(KLING_IMAGE_MODELS, 'kling-v1-5');
const V2_1 = modelOf(KLING_IMAGE_MODELS, 'kling-v2-1');

/**
 * Kling's image generation and image expand (its API reference: `POST /v1/images/generations`,
 * `POST /v1/images/editing/expand`, their `GET …/{id}`; the envelope `{code, message, request_id, data}` is
 * read by KlingTasks): the bodies sent and the task's `data` read as a status.
 */
describe('Kling images: request mapping', () => {
  it('take their protocol and poll floor from the descriptor', () => {
    expect([KlingImageVendor.protocol, KlingExpandVendor.protocol]).toEqual([KLING.protocol, KLING.protocol]);
  });

  it('a text-to-image: model_name, prompt, negative_prompt, n, aspect_ratio and resolution, callback_url', () => {
    expect(klingImageBody(V2_1, imageRequest({ n: 4, negativePrompt: 'fog', aspectRatio: '21:9', resolution: '2k' }), undefined, 'https://gw.example/cb')).toEqual({
      model_name: 'kling-v2-1',
      prompt: 'A lighthouse at dusk',
      negative_prompt: 'fog',
      n: 4,
      aspect_ratio: '21:9',
      resolution: '2k',
      callback_url: 'https://gw.example/cb',
    });
  });

  it("an image-to-image: the image in raw Base64 (no data: prefix); kling-v1-5's reference a subject unless asked, with its fidelities", () => {
    const image = imageInput(1024, 1024);
    expect(klingImageBody(V1_5, imageRequest({ images: 1, imageFidelity: 0.7, humanFidelity: 0.4 }), image, undefined)).toEqual({
      model_name: 'kling-v1-5',
      prompt: 'A lighthouse at dusk',
      image: image.bytes.toString('base64'),
      image_reference: 'subject',
      image_fidelity: 0.7,
      human_fidelity: 0.4,
      n: 1,
    });
    expect(klingImageBody(V1_5, imageRequest({ images: 1, imageReference: 'face' }), image, undefined).image_reference).toBe('face');
    expect(klingImageBody(V2_1, imageRequest({ images: 1 }), image, undefined)).toEqual({ model_name: 'kling-v2-1', prompt: 'A lighthouse at dusk', image: image.bytes.toString('base64'), n: 1 });
  });

  it("an asked size: its shape among Kling's and its class", () => {
    expect(shapeFields(V2_1, imageRequest({ size: '2048x1536' }))).toEqual({ aspect_ratio: '4:3', resolution: '2k' });
    expect(shapeFields(V2_1, imageRequest())).toEqual({});
  });

  it('what Kling would refuse, in its words, before anything is sent', () => {
    expect(unmetByKling(V2_1, imageRequest({ images: 1, negativePrompt: 'fog' }))).toBe('negative_prompt: Kling takes no negative prompt with an image (image-to-image)');
    expect(unmetByKling(V1_5, imageRequest({ imageReference: 'face' }))).toBe('image_reference: a reference kind needs an image');
    expect(unmetByKling(V1_5, imageRequest({ images: 1, imageReference: 'face', humanFidelity: 0.5 }))).toMatch(/^human_fidelity: /);
    expect(unmetByKling(V2_1, imageRequest({ imageFidelity: 0.5 }))).toBe('image_fidelity: a reference strength needs an image');
    expect(unmetByKling(V1_5, imageRequest({ images: 1, humanFidelity: 0.5 }))).toBeNull();
  });
});

describe('Kling images: answer reading', () => {
  const task = (over: object) => ({ task_id: '8f2c0d6e', task_status: 'submitted', created_at: 1722769557708, updated_at: 1722769557708, ...over });

  it("succeed: the images' URLs in their index order", () => {
    const done = task({ task_status: 'succeed', task_result: { images: [{ index: 1, url: 'https://cdn.example/b.png' }, { index: 0, url: 'https://cdn.example/a.png' }] } });
    expect(klingImageStatus(done)).toEqual({ state: 'succeeded', images: [{ url: 'https://cdn.example/a.png' }, { url: 'https://cdn.example/b.png' }] });
  });

  it('submitted and processing: working; failed: its task_status_msg; succeed without images: failed', () => {
    expect([klingImageStatus(task({})), klingImageStatus(task({ task_status: 'processing' }))]).toEqual([{ state: 'working' }, { state: 'working' }]);
    expect(klingImageStatus(task({ task_status: 'failed', task_status_msg: 'Failure to pass the risk control system' }))).toEqual({ state: 'failed', reason: 'Failure to pass the risk control system' });
    expect(klingImageStatus(task({ task_status: 'succeed', task_result: { images: [] } }))).toEqual({ state: 'failed', reason: 'it reported success without result images' });
  });
});

describe('Kling expand', () => {
  const expand = (over: Partial<ExpandRequest> = {}): ExpandRequest => ({ up_ratio: 0.2, bottom_ratio: 0.3, left_ratio: 0.1, right_ratio: 0, n: 2, watermark: false, ...over });

  it("the ratios as Kling names them (bottom also as down), the image as given, n, callback, watermark, prompt", () => {
    expect(klingExpandBody(expand({ watermark: true, prompt: 'more sky' }), 'https://cdn.example/in.png', 'https://gw.example/cb')).toEqual({
      image: 'https://cdn.example/in.png',
      up_expansion_ratio: 0.2,
      bottom_expansion_ratio: 0.3,
      down_expansion_ratio: 0.3,
      left_expansion_ratio: 0.1,
      right_expansion_ratio: 0,
      n: 2,
      callback_url: 'https://gw.example/cb',
      watermark_info: { enabled: true },
      prompt: 'more sky',
    });
    expect(klingExpandBody(expand(), 'aGVsbG8=', undefined)).toEqual({ image: 'aGVsbG8=', up_expansion_ratio: 0.2, bottom_expansion_ratio: 0.3, down_expansion_ratio: 0.3, left_expansion_ratio: 0.1, right_expansion_ratio: 0, n: 2 });
  });

  it('succeed: each image with its watermarked copy where there is one', () => {
    const done = { task_id: 'e1', task_status: 'succeed', task_result: { images: [{ index: 0, url: 'https://cdn.example/0.png', watermark_url: 'https://cdn.example/0-wm.png' }, { index: 1, url: 'https://cdn.example/1.png' }] } };
    expect(klingExpandStatus(done)).toEqual({ state: 'succeeded', images: [{ url: 'https://cdn.example/0.png', watermarkUrl: 'https://cdn.example/0-wm.png' }, { url: 'https://cdn.example/1.png' }] });
    expect(klingExpandStatus({ task_id: 'e1', task_status: 'failed' })).toEqual({ state: 'failed', reason: 'no reason given' });
  });
});
