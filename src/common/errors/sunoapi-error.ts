/**
 * The sunoapi.org family's (sunoapi.org, api.box, kie.ai) code for an error, by our HTTP status and error
 * name, so that code written against their API reads ours as theirs: their `{code, msg, data}` answer's code
 * is the outcome, from the list they document — 400 parameters, 401 unauthorized, 404 method or path,
 * 405 over the limit, 413 too long, 429 insufficient credits, 430 call frequency too high, 455 maintenance,
 * 500 server error. Our limits read as theirs: the owner's credits (`resource_pack_exhausted`) are 429,
 * requests per minute and refused credentials past their limit are 430, the owner's concurrent tasks 405,
 * an unavailable dependency 455, a method the route does not take 404. A status they have no code of (403, 409, 410, 415, 416) is its own code.
 */
export function sunoapiErrorCode(status: number, name: string): number {
  if (name === 'resource_pack_exhausted') return 429;
  if (name === 'rate_limited' || name === 'too_many_auth_failures') return 430;
  if (name === 'concurrency_limited') return 405;
  if (name === 'method_not_allowed') return 404; // their 'method or path'
  if (status === 503) return 455;
  if (status >= 500) return 500;
  return status;
}
