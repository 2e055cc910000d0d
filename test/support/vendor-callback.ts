/** One callback a fake vendor sent (or would have): where, what, and the HTTP status it was answered with. */
export interface VendorCallback {
  url: string;
  body: unknown;
  /** The answer's status; 0 when the request failed; null when not sent (an address off loopback). */
  status: number | null;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * POSTs `body` as JSON to `url` (a create's callback_url, webhook_url or notify_hook), as a vendor does when
 * its task changes, and records it in `log`; resolves with the record once it is answered. A fake never leaves
 * loopback: a URL elsewhere (a test's https://gateway.example, which nothing answers) is recorded unsent, so a
 * test that names such a base sees no callback, as before fakes called back. Nothing when there is no URL.
 */
export async function callBack(url: unknown, body: unknown, log: VendorCallback[]): Promise<VendorCallback | undefined> {
  if (typeof url !== 'string' || !URL.canParse(url)) return undefined;
  const entry: VendorCallback = { url, body, status: null };
  log.push(entry);
  if (!LOOPBACK.has(new URL(url).hostname)) return entry;
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    entry.status = res.status;
  } catch {
    entry.status = 0;
  }
  return entry;
}
