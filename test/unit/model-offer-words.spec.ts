import { AppError } from '../../src/common/errors/app-error.js';
import { type Offered, refuseUnmade } from '../../src/modules/channels/model-offer.js';

/** A toy model: the sizes it makes and whether it makes a transparent background. */
interface Spec {
  sizes: string[];
  transparent: boolean;
}
interface Req {
  model?: string;
  size?: string;
  transparent?: boolean;
}
type Field = 'model' | 'size' | 'background';

const RULES = {
  fields: ['model', 'size', 'background'] as const,
  unmet: (spec: Spec, r: Req): Field[] => [...(r.size && !spec.sizes.includes(r.size) ? ['size' as const] : []), ...(r.transparent && !spec.transparent ? ['background' as const] : [])],
  describe: (f: Field, r: Req) => (f === 'size' ? `size (${r.size})` : f === 'background' ? 'transparent background' : f),
};
const LABELS: Record<Field, string> = { model: 'model', size: 'size', background: 'background' };

const offered: Offered<Spec>[] = [
  { name: 'square', vendor: 'openai', spec: { sizes: ['1024x1024'], transparent: false } },
  { name: 'wide', vendor: 'gemini', spec: { sizes: ['1536x1024'], transparent: false } },
];

function refusal(request: Req, vendor?: { protocol: string; title: string }): string {
  try {
    refuseUnmade(offered, request, RULES, LABELS, vendor);
  } catch (err) {
    return (err as AppError).message;
  }
  throw new Error('accepted');
}

describe('the words of a request no offered model makes: each field and its rule once', () => {
  it('says a field no model makes once when no model was named', () => {
    expect(refusal({ transparent: true })).toBe('background: no configured model makes this transparent background');
  });

  it("says what a named model or the door's vendor lacks, then that no model makes it at all", () => {
    expect(refusal({ model: 'square', transparent: true })).toBe('background: model square does not make this transparent background; no configured model makes it');
    expect(refusal({ transparent: true }, { protocol: 'openai', title: 'OpenAI' })).toBe('background: no configured OpenAI model makes this transparent background; no configured model makes it');
  });

  it('names the models that make each field some model makes, and the rest once', () => {
    expect(refusal({ size: '1536x1024', transparent: true }, { protocol: 'openai', title: 'OpenAI' })).toBe('size, background: no configured OpenAI model makes this size (1536x1024) with transparent background; size is made by wide (gemini); no configured model makes the transparent background');
    expect(refusal({ size: '2048x2048', transparent: true })).toBe('size, background: no configured model makes this size (2048x2048) with transparent background');
    expect(refusal({ size: '1536x1024' }, { protocol: 'openai', title: 'OpenAI' })).toBe('size: no configured OpenAI model makes this size (1536x1024); models that could make it: wide (gemini)');
  });

  it('says what a named model makes of the refused field, where the rules can say it', () => {
    const rules = { ...RULES, offers: (f: Field, spec: Spec, _r: Req) => (f === 'size' ? `sizes ${spec.sizes.join(', ')}` : undefined) };
    const worded = (request: Req) => {
      try {
        refuseUnmade(offered, request, rules, LABELS);
      } catch (err) {
        return (err as AppError).message;
      }
      return 'accepted';
    };
    expect(worded({ model: 'square', size: '2048x2048' })).toBe('size: model square does not make this size (2048x2048) (it makes sizes 1024x1024); no configured model makes it');
    // nothing short to say of the field: as before
    expect(worded({ model: 'square', transparent: true })).toBe('background: model square does not make this transparent background; no configured model makes it');
    // two channels' models of that name that make different sizes: nothing said, rather than one of them
    const twice: Offered<Spec>[] = [...offered, { name: 'square', vendor: 'stability', spec: { sizes: ['512x512'], transparent: false } }];
    let words = '';
    try {
      refuseUnmade(twice, { model: 'square', size: '2048x2048' }, rules, LABELS);
    } catch (err) {
      words = (err as AppError).message;
    }
    expect(words).toBe('size: model square does not make this size (2048x2048); no configured model makes it');
    // no model named: nothing said of one
    expect(worded({ size: '2048x2048' })).toBe('size: no configured model makes this size (2048x2048)');
  });
});
