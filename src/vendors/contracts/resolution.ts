/**
 * The normalized resolution classes of a video, each its shorter side in pixels: what every door's and
 * vendor's resolution maps onto (Luma's 540p…4k, Kling's std/pro, OpenAI's sizes, Seedance's and Wan's 480p). One
 * table, read by the OpenAI door's sizes, the sandbox's renderer and the vendors' catalogs.
 */
export const RESOLUTION_SIDES: Readonly<Record<string, number>> = { '480p': 480, '540p': 540, '720p': 720, '768p': 768, '1080p': 1080, '4k': 2160 };

/** Frame shapes sizes are read as first (a 1366x768 frame is 16:9, not 683:384). */
export const COMMON_ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', '9:21', '3:2', '2:3'] as const;

/** The frame size an aspect ratio and resolution class ask for: the shorter side is the class (720p without one). */
export function sizeOf(aspectRatio: string, resolution?: string): string {
  const [w, h] = aspectRatio.split(':').map(Number);
  const side = RESOLUTION_SIDES[resolution ?? '720p'] ?? 720;
  const even = (v: number) => Math.round(v / 2) * 2;
  return w >= h ? `${even((side * w) / h)}x${side}` : `${side}x${even((side * h) / w)}`;
}
