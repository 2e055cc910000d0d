/**
 * Who is signed in: the key, and whether it is the admin key or a team's (and its owner). Kept in this
 * tab's sessionStorage only: never in a URL, a cookie or localStorage; it goes to the API as
 * `Authorization: Bearer`, and signing out (or closing the tab) forgets it.
 */
export interface Session {
  key: string;
  admin: boolean;
  /** The team's owner; null for the admin. */
  owner: string | null;
}

const STORE = 'mgw-console-session';

export function loadSession(): Session | null {
  try {
    const raw = window.sessionStorage.getItem(STORE);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<Session>;
    return typeof value.key === 'string' && typeof value.admin === 'boolean' ? { key: value.key, admin: value.admin, owner: value.owner ?? null } : null;
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  window.sessionStorage.setItem(STORE, JSON.stringify(session));
}

export function clearSession(): void {
  window.sessionStorage.removeItem(STORE);
}
