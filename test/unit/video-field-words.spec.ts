import { videoFieldWords } from '../../src/modules/video/video-models.js';
import { VIDEO_FIELDS, type VideoRequest } from '../../src/vendors/contracts/video-request.js';

/** How a refusal of a video request words the asked value of each field ("model x does not make this …"). */
describe('the words of an asked video field', () => {
  const ask = (over: Partial<VideoRequest>): VideoRequest => ({ prompt: 'A red fox', ...over }) as VideoRequest;

  it('words every field in English, never its internal name', () => {
    const request = ask({ audio: true, concepts: ['dolly_zoom'], cfgScale: 0.7, cameraControl: { type: 'simple' } as VideoRequest['cameraControl'], loop: true, seed: 7 });
    for (const field of VIDEO_FIELDS) expect([field, videoFieldWords(field, request)]).not.toEqual([field, expect.stringMatching(/[a-z][A-Z]/)]);
    expect([videoFieldWords('audio', request), videoFieldWords('audio', ask({ audio: false }))]).toEqual(['video with sound', 'video without sound']);
    expect([videoFieldWords('concepts', request), videoFieldWords('concepts', ask({ concepts: ['orbit_left', 'pan_right'] }))]).toEqual(['camera concept (dolly_zoom)', 'camera concepts (orbit_left, pan_right)']);
    expect([videoFieldWords('cfgScale', request), videoFieldWords('cameraControl', request), videoFieldWords('loop', request)]).toEqual(['cfg scale of 0.7', 'camera control', 'looping video']);
  });
});
