import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/status.component';
import { identify } from '../lib/api.client';
import type { Session } from '../lib/session.store';

/** The key is typed here and kept in this tab's sessionStorage only (see session.store). */
export function SignInPage({ onSignedIn }: { onSignedIn(session: Session): void }): JSX.Element {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const value = key.trim();
    if (!value) {
      setError(new Error('Enter an API key (mgw_…) or the admin key.'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const session = await identify(value);
      setKey('');
      onSignedIn(session);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="sign-in">
      <h1 tabIndex={-1}>Sign in</h1>
      <p>Sign in with your team's API key to see your team's tasks and usage, or with the admin key to see every owner's and manage keys, limits and channels.</p>
      <form onSubmit={submit} method="post" action="" noValidate>
        <label for="key">API key or admin key</label>
        <input id="key" name="key" type="password" autoComplete="off" spellcheck={false} value={key} onInput={(e) => setKey(e.currentTarget.value)} aria-describedby="key-help" required />
        <p id="key-help" class="help">
          The key stays in this browser tab only (session storage): it is never put in a URL or a cookie, and signing out or closing the tab forgets it.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorMessage error={error} title="Could not sign in" />
    </section>
  );
}
