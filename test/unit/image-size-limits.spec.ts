import { AppError } from '../../src/common/errors/app-error.js';
import { refuseOversized } from '../../src/modules/image/image-models.js';
import type { ImageField, ImageRequest } from '../../src/vendors/contracts/image-request.js';

/** An asked image size past IMAGE_MAX_SIDE or IMAGE_MAX_PIXELS is refused naming the door's field; at them it is taken. No app. */
const LIMITS = { maxSide: 100, maxPixels: 5_000 };
const LABELS = { size: 'size' } as Record<ImageField, string>;
const check = (size?: string) => {
  try {
    refuseOversized({ prompt: 'x', n: 1, ...(size ? { size } : {}) } as ImageRequest, LABELS, LIMITS);
    return 'taken';
  } catch (err) {
    return err instanceof AppError ? [err.code, err.fault?.param, err.fault?.rule] : err;
  }
};

describe('refuseOversized', () => {
  it('takes a size at the limits and none at all', () => {
    expect([check('100x50'), check('50x100'), check('1x100'), check(undefined)]).toEqual(['taken', 'taken', 'taken', 'taken']);
  });

  it('refuses one past a side or past the pixels, naming size', () => {
    const refused = ['INVALID_PARAMETER', 'size', 'above_max'];
    expect([check('101x10'), check('10x101'), check('100x51'), check('99999x99999')]).toEqual([refused, refused, refused, refused]);
  });
});
