import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload(): void;
}

/**
 * Loads with `load`, then again every `intervalMs` while the tab is visible and `keepPolling(data)` holds
 * (null interval: once). A new `deps` starts over. Errors are kept beside the last data, so a brief outage
 * shows a message without emptying the page.
 */
export function usePoll<T>(load: () => Promise<T>, deps: unknown[], intervalMs: number | null, keepPolling: (data: T) => boolean = () => true): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [nonce, setNonce] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const keepRef = useRef(keepPolling);
  keepRef.current = keepPolling;

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const value = await loadRef.current();
        if (stopped) return;
        setData(value);
        setError(undefined);
        setLoading(false);
        if (intervalMs !== null && keepRef.current(value)) timer = setTimeout(tick, intervalMs);
      } catch (err) {
        if (stopped) return;
        setError(err instanceof Error ? err : new Error(String(err)));
        setLoading(false);
        if (intervalMs !== null) timer = setTimeout(tick, Math.max(intervalMs, 5000));
      }
    };
    const tick = () => {
      if (stopped) return;
      if (document.visibilityState === 'hidden') timer = setTimeout(tick, intervalMs ?? 1000);
      else void run();
    };
    setLoading(true);
    void run();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, nonce, intervalMs]);

  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data, error, loading, reload };
}
