import type { Request } from 'express';

/** What this file reads of Express's router (the `router` package, 2.x): its layers, a route's methods. */
interface RouterLayer {
  match(path: string): unknown;
  route?: { _methods(): string[] };
}

/**
 * The methods the application's routes take at the request's path (GET's HEAD included), read from Express's
 * own router, which is what answered the request: empty when no route has the path. A request that found no
 * route for its method is a 405 with these in `Allow` (RFC 9110 §15.5.6) when there are any, else a 404.
 */
export function allowedMethods(req: Request): string[] {
  const stack = (req.app as unknown as { router?: { stack?: RouterLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (layer.route && matches(layer, req.path)) for (const method of layer.route._methods()) methods.add(method);
  }
  return [...methods].sort();
}

/** Whether a layer's path matches (a parameter that does not decode makes the router throw: no match here). */
function matches(layer: RouterLayer, path: string): boolean {
  try {
    return Boolean(layer.match(path));
  } catch {
    return false;
  }
}
