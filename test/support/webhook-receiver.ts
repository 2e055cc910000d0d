import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { startServer, type TestServer } from './http-server.js';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

/** How the receiver answers a request to a path: its nth request there (from 1). */
export type Behaviour = (n: number, res: ServerResponse) => void | Promise<void>;

/** A webhook receiver on loopback: records every request, answers per path as the test says (200 by default). */
export async function startReceiver(port = 0): Promise<{ server: TestServer; url: string; received: Received[]; behave(path: string, b: Behaviour): void; close(): Promise<void> }> {
  const received: Received[] = [];
  const behaviours = new Map<string, Behaviour>();
  const counts = new Map<string, number>();
  const server = await startServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const body = req.body.toString('utf8');
    let json: unknown = null;
    try {
      json = JSON.parse(body);
    } catch {
      // recorded as is
    }
    received.push({ path, headers: req.headers, body, json, at: Date.now() });
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    const behaviour = behaviours.get(path);
    if (behaviour) return behaviour(n, res);
    res.writeHead(200).end('ok');
  }, port);
  return { server, url: server.url, received, behave: (path, b) => behaviours.set(path, b), close: () => server.close() };
}

/** Verifies a delivery as a receiver would, with the `standardwebhooks` package. Throws when it does not verify. */
export function verify(secret: string, delivery: Received): unknown {
  const h = delivery.headers;
  return new Webhook(secret).verify(delivery.body, { 'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']) });
}
