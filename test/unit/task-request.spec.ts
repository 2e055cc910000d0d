import type { Task } from '../../src/common/tasks/task-kind.js';
import type { DoorRendering } from '../../src/doors/contracts/door.js';
import { TaskDoors } from '../../src/doors/contracts/task-doors.js';
import { CONCAT_DEFINITION } from '../../src/modules/concat/concat.definition.js';
import { IMAGE_DEFINITION } from '../../src/modules/image/image.definition.js';
import { MUSIC_DEFINITION } from '../../src/modules/music/music.definition.js';
import { askedRequest, requestedModel } from '../../src/modules/task-list/task-request.js';
import { VIDEO_DEFINITION } from '../../src/modules/video/video.definition.js';

// GET /tasks/{id}'s request: what a task asked, in the gateway's words, without its door and its kind's bookkeeping.
describe('askedRequest', () => {
  it('leaves out the door and the top-level, nested and per-item bookkeeping its kind declares, and changes nothing stored', () => {
    const params = {
      mode: 'edit',
      prompt: 'Put a hat on it',
      n: 1,
      images: 2,
      mask: true,
      model: 'gpt-image-1',
      door: 'openai',
      inputs: [{ format: 'png', width: 640, height: 480 }, { url: 'https://example.com/b.png', format: 'jpeg', width: 320, height: 320 }],
      mask_facts: { format: 'png', width: 640, height: 480 },
      target_size: '640x480',
      user: 'u-1',
    };
    const stored = structuredClone(params);
    expect(askedRequest(params, IMAGE_DEFINITION)).toEqual({ mode: 'edit', prompt: 'Put a hat on it', n: 1, images: 2, mask: true, model: 'gpt-image-1', inputs: [{}, { url: 'https://example.com/b.png' }], user: 'u-1' });
    expect(params).toEqual(stored);
  });

  it("keeps a music continuation's clip and second, without what the gateway resolved of it", () => {
    const params = {
      lyrics: '[Verse] la la',
      description: null,
      style: 'lo-fi',
      avoid_style: null,
      title: 'Kites',
      model: 'chirp-v4',
      instrumental: false,
      clip_ids: ['c1', 'c2'],
      continues: { clip_id: 'c0', at_s: 12, from_upload: false, upstream_clip_id: 'up-9', channel_id: 'ch-1' },
    };
    expect(askedRequest(params, MUSIC_DEFINITION)).toEqual({ lyrics: '[Verse] la la', description: null, style: 'lo-fi', avoid_style: null, title: 'Kites', model: 'chirp-v4', instrumental: false, continues: { clip_id: 'c0', at_s: 12 } });
    expect(askedRequest({ ...params, continues: null }, MUSIC_DEFINITION).continues).toBeNull();
  });

  it('shows a video request with its images as asked (an upload, a URL), not the ids the gateway gave them', () => {
    const params = {
      prompt: 'a boat',
      loop: false,
      model: 'ray-2',
      durationS: 5,
      firstFrame: { type: 'image', id: 'm-1', upload: true },
      lastFrame: { type: 'generation', generationId: 'g-1' },
      referenceImages: [{ type: 'image', id: 'r-0', url: 'https://example.com/r0.jpg' }],
      door: 'luma',
    };
    expect(askedRequest(params, VIDEO_DEFINITION)).toEqual({
      prompt: 'a boat',
      loop: false,
      model: 'ray-2',
      durationS: 5,
      firstFrame: { type: 'image', upload: true },
      lastFrame: { type: 'generation', generationId: 'g-1' },
      referenceImages: [{ type: 'image', url: 'https://example.com/r0.jpg' }],
    });
  });

  it('shows what a concat asked (its clips), and a kind declaring nothing its whole document but the door', () => {
    expect(askedRequest({ clip_id: 'c9', clip_ids: null, parts: [{ clip_id: 'c1' }], song_id: 's', title: 't', style: null, lyrics: null, model: 'chirp-v4' }, CONCAT_DEFINITION)).toEqual({ clip_id: 'c9', clip_ids: null });
    expect(askedRequest({ model: null, input: 'Hello', voice: { name: 'alloy' }, door: 'openai' }, { request: undefined })).toEqual({ model: null, input: 'Hello', voice: { name: 'alloy' } });
    expect(askedRequest(null, VIDEO_DEFINITION)).toEqual({});
  });

  it("declares the video and image kinds' input media by role, and no result's", () => {
    const video = VIDEO_DEFINITION.request!.inputRoles!;
    expect(['frame0', 'frame1', 'ref0', 'ref3', 'fit0'].filter((r) => video.test(r))).toHaveLength(5);
    expect(['video', 'thumbnail', 'frame2', 'ref', 'xref0'].filter((r) => video.test(r))).toEqual([]);
    const image = IMAGE_DEFINITION.request!.inputRoles!;
    expect(['input', 'mask', 'image', 'partial', 'inputs'].filter((r) => image.test(r))).toEqual(['input', 'mask']);
  });
});

describe('requestedModel', () => {
  it('is the model the document names, or null', () => {
    expect([requestedModel({ model: 'ray-2' }), requestedModel({ model: null }), requestedModel({}), requestedModel(null)]).toEqual(['ray-2', null, null, null]);
  });
});

describe('TaskDoors: the door a task came through', () => {
  const rendering = (door: string, kind: string, fallback = false): DoorRendering => ({ door, kind, fallback, records: async (tasks: Task<any, any>[]) => tasks.map(() => ({})) });
  const doors = new TaskDoors([rendering('kling', 'expand', true), rendering('kling', 'image', true), rendering('suno', 'music', true), rendering('suno', 'audio', true), rendering('other', 'music')]);

  it("is the door the task stores, else its kind's fallback door, else none", () => {
    expect(doors.doorOf('image', 'openai')).toBe('openai'); // a door that renders none of the kind is still the door it came through
    expect(doors.doorOf('image', undefined)).toBe('kling');
    expect(doors.doorOf('music', null)).toBe('suno');
    expect(doors.doorOf('echo', undefined)).toBeNull();
  });

  it('names the kinds whose tasks storing no door came through a door', () => {
    expect(doors.kindsDefaultingTo('kling').sort()).toEqual(['expand', 'image']);
    expect(doors.kindsDefaultingTo('suno').sort()).toEqual(['audio', 'music']);
    expect(doors.kindsDefaultingTo('other')).toEqual([]);
  });
});
