import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useKey } from './lib/api.client';
import { Link, navigate, usePath } from './lib/router';
import { clearSession, loadSession, saveSession, type Session } from './lib/session.store';
import { ChannelsPage } from './pages/channels.page';
import { OwnerPage } from './pages/owner.page';
import { OwnersPage } from './pages/owners.page';
import { SignInPage } from './pages/sign-in.page';
import { TaskPage } from './pages/task.page';
import { TasksPage } from './pages/tasks.page';
import { UsagePage } from './pages/usage.page';

interface Route {
  title: string;
  page: JSX.Element;
}

function route(path: string, session: Session): Route {
  const task = /^\/tasks\/([^/]+)\/?$/.exec(path);
  if (task) return { title: `Task ${decodeURIComponent(task[1])}`, page: <TaskPage key={task[1]} session={session} id={decodeURIComponent(task[1])} /> };
  if (path === '/' || path === '/tasks' || path === '/tasks/') return { title: 'Tasks', page: <TasksPage session={session} /> };
  if (path === '/usage') return { title: 'Usage', page: <UsagePage session={session} /> };
  if (session.admin) {
    if (path === '/owners') return { title: 'Owners and keys', page: <OwnersPage /> };
    const owner = /^\/owners\/([^/]+)\/?$/.exec(path);
    if (owner) return { title: `Owner ${decodeURIComponent(owner[1])}`, page: <OwnerPage key={owner[1]} owner={decodeURIComponent(owner[1])} /> };
    if (path === '/channels') return { title: 'Channels', page: <ChannelsPage /> };
  }
  return {
    title: 'Not found',
    page: (
      <section>
        <h1 tabIndex={-1}>Not found</h1>
        <p>
          The console has no page at this address{session.admin ? '' : ' (or it needs the admin key)'}. <Link href="/">Go to the tasks</Link>.
        </p>
      </section>
    ),
  };
}

export function App(): JSX.Element {
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const path = usePath();
  useKey(session?.key ?? null);

  const current = session ? route(path, session) : { title: 'Sign in', page: <SignInPage onSignedIn={(s) => signIn(s)} /> };
  useEffect(() => {
    document.title = `${current.title} · Media gateway console`;
    // after a navigation, the page's heading takes the focus: screen readers announce the new page
    document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: false });
  }, [path, session?.key, current.title]);

  function signIn(s: Session): void {
    saveSession(s);
    setSession(s);
    if (path !== '/' && !path.startsWith('/tasks') && !path.startsWith('/usage') && !s.admin) navigate('/', true);
  }
  function signOut(): void {
    clearSession();
    useKey(null);
    setSession(null);
    navigate('/');
  }

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <p class="brand">
          <Link href="/">Media gateway console</Link>
        </p>
        {session && (
          <nav aria-label="Main">
            <ul>
              <li>
                <Link href="/" aria-current={path === '/' || path.startsWith('/tasks') ? 'page' : undefined}>
                  Tasks
                </Link>
              </li>
              <li>
                <Link href="/usage" aria-current={path === '/usage' ? 'page' : undefined}>
                  Usage
                </Link>
              </li>
              {session.admin && (
                <>
                  <li>
                    <Link href="/owners" aria-current={path.startsWith('/owners') ? 'page' : undefined}>
                      Owners and keys
                    </Link>
                  </li>
                  <li>
                    <Link href="/channels" aria-current={path === '/channels' ? 'page' : undefined}>
                      Channels
                    </Link>
                  </li>
                </>
              )}
            </ul>
          </nav>
        )}
        {session && (
          <div class="who">
            <span id="signed-in-as">{session.admin ? 'Signed in as admin' : `Signed in as team ${session.owner}`}</span>{' '}
            <button type="button" class="secondary" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main">{current.page}</main>
    </>
  );
}
