import type { Request } from 'express';

/**
 * The full path of the request, without the query. (`req.path` is relative to where a middleware is
 * mounted, so code that runs in middleware or filters reads the original URL instead.)
 */
export function requestPath(req: Request): string {
  const url = req.originalUrl ?? req.url;
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}
