import { durationOf, inputImages, type VideoParams, videoRequestOf } from '../../src/modules/video/video-task.js';

// A generation's parameters document is the normalized request, its images as stored and its door: what vendors
// read of it is the request, with uploaded images linked and nothing of the door's.
describe('videoRequestOf', () => {
  const params: VideoParams = {
    prompt: 'a boat',
    loop: false,
    aspectRatio: '9:16',
    durationS: 8,
    negativePrompt: 'blur',
    cameraControl: { type: 'simple', config: { zoom: 5 } },
    firstFrame: { type: 'image', id: 'f0', upload: true },
    lastFrame: { type: 'image', id: 'f1', url: 'https://example.com/end.jpg' },
    referenceImages: [
      { type: 'image', id: 'r0', url: 'https://example.com/r0.jpg' },
      { type: 'image', id: 'r1', upload: true },
    ],
    door: 'kling',
  };

  it('is the stored request, each upload sent as the link given for its role (hosted), each URL as given, no door or ids', () => {
    expect(videoRequestOf(params, { frame0: 'https://gw/frame0?sig', ref1: 'https://gw/ref1?sig' })).toEqual({
      prompt: 'a boat',
      loop: false,
      aspectRatio: '9:16',
      durationS: 8,
      negativePrompt: 'blur',
      cameraControl: { type: 'simple', config: { zoom: 5 } },
      firstFrame: { type: 'image', url: 'https://gw/frame0?sig', hosted: true },
      lastFrame: { type: 'image', url: 'https://example.com/end.jpg' },
      referenceImages: [
        { type: 'image', url: 'https://example.com/r0.jpg' },
        { type: 'image', url: 'https://gw/ref1?sig', hosted: true },
      ],
    });
  });

  it("a sample of the service's, named with its URL, is hosted: sent inline where the vendor takes images so", () => {
    const sampled = videoRequestOf({ ...params, firstFrame: { type: 'image', id: 'f0', url: 'http://gw.local/samples/keyframe.jpg' } }, { frame0: 'http://gw.local/samples/keyframe.jpg' });
    expect([sampled.firstFrame, sampled.lastFrame]).toEqual([
      { type: 'image', url: 'http://gw.local/samples/keyframe.jpg', hosted: true },
      { type: 'image', url: 'https://example.com/end.jpg' },
    ]);
  });

  it('without links (a check at the door), an upload is an empty hosted link; a generation frame is kept as it is', () => {
    const request = videoRequestOf({ prompt: 'p', loop: true, firstFrame: { type: 'generation', generationId: 'g1' }, lastFrame: { type: 'image', id: 'x', upload: true }, door: 'luma' });
    expect(request).toEqual({ prompt: 'p', loop: true, firstFrame: { type: 'generation', generationId: 'g1' }, lastFrame: { type: 'image', url: '', hosted: true } });
    expect('door' in request).toBe(false);
  });

  it('names each input image by the media role its upload has', () => {
    expect(inputImages(params).map((i) => i.role)).toEqual(['frame0', 'frame1', 'ref0', 'ref1']);
    expect(inputImages({ prompt: 'p', loop: false, door: 'openai' })).toEqual([]);
  });

  it('counts 5 s when no duration was asked, the asked one otherwise', () => {
    expect([durationOf({ prompt: 'p', loop: false, door: 'luma' }), durationOf(params)]).toEqual([5, 8]);
  });
});
