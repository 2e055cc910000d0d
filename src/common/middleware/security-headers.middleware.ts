import type { NextFunction, Request, Response } from 'express';

/**
 * Headers on every answer, whatever route or error: `X-Content-Type-Options: nosniff`, so a browser takes
 * each answer for the type it is served as (a /media file whose bytes look like HTML or script is never run
 * as one; JSON is never read as script). The console adds its own policy on top (console-policy.ts).
 */
export function securityHeadersMiddleware(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
}
