import type { KindDefinition } from '../../common/tasks/task-kind.js';

/** The field of a parameters document that names the door a task came through (the view shows it apart). */
const DOOR_FIELD = 'door';

/**
 * What a task asked, as `GET /tasks/{id}` shows it: its parameters document (the operation's normalized
 * request, in the gateway's own words) without the door and without the fields its kind declares as
 * bookkeeping (`KindDefinition.request.bookkeeping`). The stored document is not changed.
 */
export function askedRequest(params: unknown, definition: Pick<KindDefinition, 'request'> | undefined): Record<string, unknown> {
  if (!isObject(params)) return {};
  const copy = structuredClone(params);
  delete copy[DOOR_FIELD];
  for (const path of definition?.request?.bookkeeping ?? []) drop(copy, path.split('.'));
  return copy;
}

/** The model a task's document names (its request's `model`), or null when it names none. */
export function requestedModel(params: unknown): string | null {
  return isObject(params) && typeof params.model === 'string' ? params.model : null;
}

/** Removes the field at `path` (`*` stands for every item of an array) wherever it is. */
function drop(value: unknown, path: string[]): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (head === '*') {
    if (Array.isArray(value)) for (const item of value) drop(item, rest);
    return;
  }
  if (!isObject(value)) return;
  if (rest.length === 0) delete value[head];
  else drop(value[head], rest);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
