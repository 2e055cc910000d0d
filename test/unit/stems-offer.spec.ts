import { AppError } from '../../src/common/errors/app-error.js';
import { type OfferedStemsModel, refuseUnmadeStems } from '../../src/modules/stems/stems-offer.js';
import { ELEVENLABS_STEMS_MODELS } from '../../src/vendors/elevenlabs/elevenlabs-stems.vendor.js';

const LABELS = { model: 'model', split: 'stems', clip: 'clip_id' };
const eleven: OfferedStemsModel = { name: 'stem_separation_v1', vendor: 'elevenlabs', spec: ELEVENLABS_STEMS_MODELS[0] };
/** A vocal remover of an aggregator's own clips: two stems only. */
const remover: OfferedStemsModel = { name: 'vocal-removal', vendor: 'sunoapi', spec: { id: 'separate_vocal', splits: { two: ['vocals', 'instrumental'] }, source: 'own', format: 'mp3' } };

function refusal(offered: OfferedStemsModel[], ask: Parameters<typeof refuseUnmadeStems>[1]): string | null {
  try {
    refuseUnmadeStems(offered, ask, LABELS);
    return null;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    expect(err.code).toBe('INVALID_PARAMETER');
    return err.message;
  }
}

describe('stems: what no configured model makes is a 400 naming the field', () => {
  it('a split no configured model makes names stems; one a model makes passes', () => {
    expect(refusal([remover], { split: 'all', clip: 'own' })).toMatch(/^stems: no configured model makes this split into every stem it makes/);
    expect(refusal([remover], { split: 'two', clip: 'own' })).toBeNull();
    expect(refusal([remover, eleven], { split: 'all', clip: 'own' })).toBeNull();
  });

  it('a clip only a vendor that holds it could split (an upload, with only own-clip models) names clip_id', () => {
    expect(refusal([remover], { split: 'two', clip: 'stored' })).toMatch(/^clip_id: no configured model makes this split of a clip no vendor of its holds/);
    expect(refusal([remover, eleven], { split: 'two', clip: 'stored' })).toBeNull();
  });

  it('no stems channel at all: nothing refused (the task waits for one, as any relayed task)', () => {
    expect(refusal([], { split: 'all', clip: 'stored' })).toBeNull();
  });
});
