import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { MediaAnswer } from './media-delivery.js';

/** Writes a media answer, streaming its body; a client that goes away ends the read from storage too. */
export function sendMedia(res: Response, answer: MediaAnswer): void {
  res.set(answer.headers);
  if (answer.error) throw answer.error; // the envelope, from the global filter, with the headers above
  res.status(answer.status);
  if (!answer.body || res.req.method === 'HEAD') {
    answer.body?.destroy();
    res.end();
    return;
  }
  pipeline(answer.body, res).catch(() => res.destroy());
}
