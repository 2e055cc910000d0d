import { client } from '../api/client.gen';
import { getUsage, getUsageByDay } from '../api/sdk.gen';
import type { Session } from './session.store';

/** An answer of the API that is not a success, with the words of its error envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: number | string,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** Every call of the generated client goes to this service, with the session's key as `Authorization: Bearer`. */
export function useKey(key: string | null): void {
  client.setConfig({ baseUrl: window.location.origin, auth: () => key ?? undefined, cache: 'no-store' });
}

interface Outcome<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

/** The data of a call of the generated client, or an ApiError with the envelope's message. */
export async function call<T>(request: Promise<Outcome<T>>): Promise<T> {
  let outcome: Outcome<T>;
  try {
    outcome = await request;
  } catch {
    throw new ApiError(0, 'The service could not be reached. Check the connection and try again.');
  }
  const status = outcome.response?.status ?? 0;
  if (outcome.error !== undefined || !outcome.response?.ok) throw toApiError(status, outcome.error);
  return outcome.data as T;
}

/** A GET of one of the API's own routes named by a link the API gave (a task's record_path), as it answers it. */
export function getPath(path: string): Promise<unknown> {
  return call(client.get<unknown, unknown, false>({ url: path, security: [{ scheme: 'bearer', type: 'http' }] }));
}

function toApiError(status: number, body: unknown): ApiError {
  const envelope = body as { code?: number | string; message?: unknown; request_id?: string } | undefined;
  if (envelope && typeof envelope === 'object' && typeof envelope.message === 'string') return new ApiError(status, envelope.message, envelope.code, envelope.request_id);
  return new ApiError(status, status ? `The service answered HTTP ${status}.` : 'The service could not be reached.');
}

/** What the key is: a team's (GET /usage names its owner) or the admin key (the admin routes take it). */
export async function identify(key: string): Promise<Session> {
  useKey(key);
  const asTeam = async (): Promise<Session> => ({ key, admin: false, owner: (await call(getUsage())).owner });
  const asAdmin = async (): Promise<Session> => {
    const today = new Date().toISOString().slice(0, 10);
    await call(getUsageByDay({ query: { from: today, to: today } }));
    return { key, admin: true, owner: null };
  };
  const [first, second] = key.startsWith('mgw_') ? [asTeam, asAdmin] : [asAdmin, asTeam];
  try {
    return await first();
  } catch (err) {
    if (err instanceof ApiError && err.status === 0) throw err;
    try {
      return await second();
    } catch {
      throw err;
    }
  }
}
