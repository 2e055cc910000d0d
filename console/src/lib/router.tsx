import type { ComponentChildren, JSX, TargetedMouseEvent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Where the service serves the console; every route of the console is under it (deep links load index.html). */
export const BASE = '/console';

const listeners = new Set<() => void>();

/** The console's path: what follows /console (`/`, `/tasks/<id>`, …). */
export function currentPath(): string {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  return path === '' ? '/' : path;
}

export function navigate(path: string, replace = false): void {
  if (replace) window.history.replaceState(null, '', BASE + path);
  else window.history.pushState(null, '', BASE + path);
  for (const listener of listeners) listener();
}

/** The current path, re-rendered on navigation (links, back and forward). */
export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => setPath(currentPath());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

/** A link inside the console: a real <a href> (open in a new tab works), followed without reloading the page. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' }): JSX.Element {
  const { href, children, ...rest } = props;
  const onClick = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={BASE + href} onClick={onClick}>
      {children}
    </a>
  );
}
