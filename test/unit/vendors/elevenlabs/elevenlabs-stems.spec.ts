import { zipSync } from 'fflate';
import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicSource } from '../../../../src/vendors/contracts/music-vendor.js';
import { unmetStemsFields } from '../../../../src/vendors/contracts/stems-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { ELEVENLABS_STEMS_MODELS, ElevenLabsStemsVendor, stemsOfZip } from '../../../../src/vendors/elevenlabs/elevenlabs-stems.vendor.js';
import { ELEVENLABS } from '../../../../src/vendors/elevenlabs/elevenlabs.vendor.js';
import { stemsCatalogOf, STEMS_VENDORS } from '../../../../src/vendors/stems-vendors.js';
import { correlation, decodeMono, testMp3 } from '../../../support/media.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../../../support/vendors/elevenlabs/elevenlabs.fake.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const model = ELEVENLABS_STEMS_MODELS[0];

describe("ElevenLabs' stems: its model and the archive it answers", () => {
  it('its one model makes both splits of any stored clip (two: vocals and instrumental; all: its six), registered for its protocol and no gateway', () => {
    expect(model).toEqual({ id: 'stem_separation_v1', splits: { two: ['vocals', 'instrumental'], all: ['vocals', 'drums', 'bass', 'guitar', 'piano', 'other'] }, source: 'any', format: 'mp3' });
    expect(unmetStemsFields(model, { split: 'two', clip: 'stored' })).toEqual([]);
    expect(unmetStemsFields(model, { split: 'all', clip: 'own' })).toEqual([]);
    expect(unmetStemsFields({ ...model, splits: { two: ['vocals', 'instrumental'] }, source: 'own' }, { split: 'all', clip: 'stored' })).toEqual(['split', 'clip']);
    expect(STEMS_VENDORS.map((v) => v.protocol)).toContain(ELEVENLABS.protocol);
    expect(ELEVENLABS.operations).toContain('stems');
    expect(stemsCatalogOf('elevenlabs')).toBe(ELEVENLABS_STEMS_MODELS);
    expect(stemsCatalogOf('gateway')).toEqual([]);
  });

  it("reads a ZIP's audio files as stems named by their files (folders, hidden files and macOS forks left out), in the archive's order", async () => {
    const mp3 = testMp3(0.5);
    const zip = Buffer.from(zipSync({ 'stems/vocals.mp3': new Uint8Array(mp3), '__MACOSX/._vocals.mp3': new Uint8Array([0, 5, 22]), '.DS_Store': new Uint8Array([1]), 'instrumental.mp3': new Uint8Array(mp3) }));
    const stems = await stemsOfZip(zip);
    expect(stems.map((s) => [s.name, s.audio?.format, s.audio?.bytes.length])).toEqual([
      ['vocals', 'mp3', mp3.length],
      ['instrumental', 'mp3', mp3.length],
    ]);
  });

  it('refuses what is not a ZIP of audio: JSON, an empty archive, a file that is not audio', async () => {
    await expect(stemsOfZip(Buffer.from('{"detail":"oops"}'))).rejects.toThrow(UnusableAnswer);
    await expect(stemsOfZip(Buffer.from(zipSync({})))).rejects.toThrow(/holds no stems/);
    await expect(stemsOfZip(Buffer.from(zipSync({ 'vocals.mp3': new TextEncoder().encode('not audio at all, just words') })))).rejects.toThrow(/stem vocals\.mp3/);
  });
});

describe("ElevenLabs' stems adapter against the fake", () => {
  let fake: FakeElevenLabs;
  let vendor: ElevenLabsStemsVendor;
  let account: VendorAccount;
  const clip = testMp3(2, 330);
  const source: MusicSource = { url: () => Promise.reject(new Error('not asked')), bytes: () => Promise.resolve({ bytes: clip, format: 'mp3', durationS: 2 }) };
  beforeAll(async () => {
    fake = await startFakeElevenLabs('xi-stems');
    vendor = new ElevenLabsStemsVendor(loopbackUpstreamClient());
    account = { baseUrl: fake.url, auth: ELEVENLABS.auth({ api_key: 'xi-stems' }) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.stems.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it("two stems: the clip sent as the form's file with stem_variation_id two_stems_v1 and output_format mp3_44100_128; the ZIP's stems decode and together are the clip", async () => {
    const answer = await vendor.create(account, { request: { model: model.id, split: 'two' }, model, taskId: 't1', source });
    expect(fake.stems).toHaveLength(1);
    expect(fake.stems[0]).toMatchObject({ outputFormat: 'mp3_44100_128', stemVariationId: 'two_stems_v1', status: 200 });
    expect(fake.stems[0].fields.sort()).toEqual(['file', 'stem_variation_id']);
    expect(fake.stems[0].file!.bytes.equals(clip)).toBe(true);
    expect(fake.stems[0].file!.type).toBe('audio/mpeg');
    if (!('made' in answer)) throw new Error('expected the stems at once');
    expect(answer.made.map((s) => s.name)).toEqual(['vocals', 'instrumental']);
    const [vocals, instrumental] = await Promise.all(answer.made.map((s) => decodeMono(s.audio!.bytes, 'mp3')));
    const original = await decodeMono(clip, 'mp3');
    const n = Math.min(vocals.length, instrumental.length, original.length);
    const sum = new Float32Array(n).map((_, i) => vocals[i] + instrumental[i]);
    expect(correlation(sum, original.subarray(0, n))).toBeGreaterThan(0.95);
  });

  it('all: six_stems_v1, its six stems by name', async () => {
    const answer = await vendor.create(account, { request: { model: model.id, split: 'all' }, model, taskId: 't2', source });
    expect(fake.stems[0].stemVariationId).toBe('six_stems_v1');
    expect('made' in answer && answer.made.map((s) => s.name)).toEqual(['vocals', 'drums', 'bass', 'guitar', 'piano', 'other']);
  });

  it("its errors as its API's: 5xx and 429 busy (another channel may take it), 401 quota_exceeded the account's", async () => {
    const create = () => vendor.create(account, { request: { model: model.id, split: 'two' }, model, taskId: 't3', source });
    fake.knobs.serverError = 1;
    await expect(create()).rejects.toThrow(UpstreamBusy);
    fake.knobs.rateLimited = 1;
    await expect(create()).rejects.toThrow(UpstreamBusy);
    fake.knobs.quotaExceeded = true;
    const refused: unknown = await create().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UpstreamRefused);
    expect((refused as UpstreamRefused).kind).toBe('account');
  });
});
