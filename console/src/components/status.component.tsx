import type { JSX } from 'preact';
import { ApiError } from '../lib/api.client';

/** An error as the API's envelope words it, announced to screen readers. */
export function ErrorMessage({ error, title }: { error: unknown; title?: string }): JSX.Element | null {
  if (!error) return null;
  const err = error instanceof Error ? error : new Error(String(error));
  const details = err instanceof ApiError ? [err.status ? `HTTP ${err.status}` : null, err.code !== undefined ? `code ${err.code}` : null, err.requestId ? `request ${err.requestId}` : null].filter(Boolean).join(', ') : '';
  return (
    <div class="error" role="alert">
      <p>
        <strong>{title ?? 'Error'}:</strong> {err.message}
      </p>
      {details && <p class="error-details">{details}</p>}
    </div>
  );
}

export function Loading({ what }: { what: string }): JSX.Element {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** A short confirmation of what an action did, announced politely. */
export function Notice({ children }: { children: preact.ComponentChildren }): JSX.Element | null {
  if (!children) return null;
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

/** A task's state: the normalized one, and the operation's own name for it. */
export function StateBadge({ state, status }: { state: string; status?: string }): JSX.Element {
  return (
    <span class={`state state-${state}`}>
      {state}
      {status && status !== state ? <span class="state-status"> ({status})</span> : null}
    </span>
  );
}
