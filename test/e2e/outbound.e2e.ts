import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/infra/config/app-config.js';
import { nonPublicReason } from '../../src/infra/outbound/address-policy.js';
import { type HostResolver, SystemHostResolver } from '../../src/infra/outbound/host-resolver.js';
import { OutboundError, type OutboundPurpose, SafeFetchService } from '../../src/infra/outbound/safe-fetch.service.js';
import { Tracing } from '../../src/infra/tracing/tracing.service.js';
import { HostTable } from '../support/host-table.js';
import { startServer, type TestServer } from '../support/http-server.js';
import { pollUntil } from '../support/poll.js';

// A limit no healthy loopback answer comes near, even on a loaded CI machine; the test of the total
// timeout itself asks for a short one.
function fetcher(env: Record<string, string> = {}, resolver: HostResolver = new SystemHostResolver()): SafeFetchService {
  const config = loadConfig({ OUTBOUND_TIMEOUT_MS: '30000', OUTBOUND_CONNECT_TIMEOUT_MS: '10000', ...env });
  return new SafeFetchService(config, new Tracing(config), resolver);
}

const PURPOSES: OutboundPurpose[] = ['caller', 'upstream'];

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OutboundError) return err;
    throw err;
  }
  throw new Error('expected the fetch to fail');
}

describe('address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    // IPv4-compatible IPv6 (::/96, deprecated): as written, and as a URL writes it ([::127.0.0.1] is [::7f00:1])
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::a00:1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['0:0:0:0:0:0:a9fe:a9fe', 'ipv4Compatible'],
    // the other IPv6 forms that embed IPv4
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['2002:7f00:1::', '6to4'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  ])('refuses %s (%s)', (address, range) => {
    expect(nonPublicReason(address)).toContain(range);
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows the public address %s', (address) => {
    expect(nonPublicReason(address)).toBeNull();
  });
});

describe('SafeFetchService', () => {
  let server: TestServer;
  let hops = 0;
  beforeAll(async () => {
    server = await startServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/ok') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`host=${req.headers.host}`);
      } else if (url.pathname === '/redirect') {
        hops++;
        const left = Number(url.searchParams.get('n'));
        res.writeHead(302, { location: left > 0 ? `/redirect?n=${left - 1}` : '/ok' }).end();
      } else if (url.pathname === '/to-ip') {
        res.writeHead(302, { location: `http://127.0.0.1:${server.port}/ok` }).end();
      } else if (url.pathname === '/big-declared') {
        res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
        res.end(Buffer.alloc(2 * 1024 * 1024));
      } else if (url.pathname === '/big-stream') {
        res.writeHead(200); // chunked: no length to check beforehand
        const chunk = Buffer.alloc(64 * 1024);
        let sent = 0;
        const push = () => {
          while (sent < 40) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', push);
          }
          res.end();
        };
        push();
      } else if (url.pathname === '/hang') {
        // never answers
      } else {
        res.writeHead(404).end('nope');
      }
    });
  });
  afterAll(() => server.close());

  it('refuses loopback, private and link-local targets by default, for either purpose, without connecting', async () => {
    const f = fetcher();
    const before = server.requests.length;
    const urls = [`${server.url}/ok`, `http://localhost:${server.port}/ok`, `http://[::1]:${server.port}/ok`, `http://[::127.0.0.1]:${server.port}/ok`, `http://[::ffff:127.0.0.1]:${server.port}/ok`, 'http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://0.0.0.0/', 'http://0x7f.1/'];
    for (const purpose of PURPOSES) {
      for (const url of urls) {
        const err = await failure(f.fetchBytes(purpose, url, 1024));
        expect([purpose, url, err.kind]).toEqual([purpose, url, 'refused']);
        expect(err.message).toMatch(/private targets are refused/);
      }
    }
    expect(server.requests.length).toBe(before);
  });

  it('refuses [::127.0.0.1] (IPv4-compatible IPv6) by name of its rule', async () => {
    const err = await failure(fetcher().fetchBytes('caller', `http://[::127.0.0.1]:${server.port}/ok`, 1024));
    expect(err.message).toBe('::7f00:1 is an IPv4-compatible IPv6 address: only public addresses are fetched (private targets are refused)');
  });

  it('says which rule refused a host name, never the address it resolves to', async () => {
    const err = await failure(fetcher().fetchBytes('caller', `http://localhost:${server.port}/ok`, 1024));
    expect(err.message).toBe('the host localhost resolves to a loopback address: only public addresses are fetched (private targets are refused)');
    expect(err.message).not.toMatch(/127\.0\.0\.1|::1/);
    const literal = await failure(fetcher().fetchBytes('caller', 'http://169.254.169.254/latest/meta-data/', 1024));
    expect(literal.message).toBe('169.254.169.254 is a link-local address: only public addresses are fetched (private targets are refused)');
    // an upstream's refusal (read by admins) says how to allow it
    const upstream = await failure(fetcher().fetchBytes('upstream', `http://localhost:${server.port}/ok`, 1024));
    expect(upstream.message).toMatch(/private targets are refused\); an upstream's host may be named in OUTBOUND_ALLOW_HOSTS$/);
  });

  it('fetches only http and https', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'gopher://x/']) {
      expect((await failure(fetcher().fetchBytes('upstream', url, 1024))).kind).toBe('refused');
    }
  });

  it('lets ALLOW_PRIVATE_URLS through for either purpose, connecting to the checked address with the original Host', async () => {
    for (const purpose of PURPOSES) {
      expect((await fetcher({ ALLOW_PRIVATE_URLS: 'true' }).fetchBytes(purpose, `${server.url}/ok`, 1024)).body.toString()).toBe(`host=127.0.0.1:${server.port}`);
    }
  });

  it('lets an upstream reach a host of OUTBOUND_ALLOW_HOSTS, never a caller\'s URL', async () => {
    const allowed = fetcher({ OUTBOUND_ALLOW_HOSTS: 'other.example, localhost' });
    expect((await allowed.fetchBytes('upstream', `http://localhost:${server.port}/ok`, 1024)).body.toString()).toBe(`host=localhost:${server.port}`);
    expect((await failure(allowed.fetchBytes('upstream', `${server.url}/ok`, 1024))).kind).toBe('refused'); // 127.0.0.1 is not in the list
    const before = server.requests.length;
    const err = await failure(allowed.fetchBytes('caller', `http://localhost:${server.port}/ok`, 1024));
    expect([err.kind, err.message]).toEqual(['refused', 'the host localhost resolves to a loopback address: only public addresses are fetched (private targets are refused)']);
    expect((await failure(allowed.request('caller', `http://localhost:${server.port}/ok`, { method: 'POST', body: '{}', maxBytes: 1024, followRedirects: false, acceptAnyStatus: true }))).kind).toBe('refused');
    expect(server.requests.length).toBe(before);
  });

  it("lets go of a kept-alive connection before the server's Keep-Alive timeout, so no request is sent on a connection the server is closing", async () => {
    // a server that keeps idle connections 3 s and says so (Keep-Alive: timeout=3), as Node's servers do with their 5 s
    const idle = http.createServer((_req, res) => res.end('ok'));
    idle.keepAliveTimeout = 3000;
    await new Promise<void>((resolve) => idle.listen(0, '127.0.0.1', resolve));
    const port = (idle.address() as AddressInfo).port;
    const endedByClient: boolean[] = [];
    idle.on('connection', (socket) => {
      let ended = false;
      socket.on('end', () => (ended = true)); // the client closed its side first
      socket.on('close', () => endedByClient.push(ended));
    });
    const allowed = fetcher({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
    try {
      const answer = await allowed.request('upstream', `http://127.0.0.1:${port}/ok`, { maxBytes: 1024, keepAlive: true });
      expect(answer.headers['keep-alive']).toBe('timeout=3');
      // the client drops it 1 s before the server would (both timers in this one process: their order holds under load)
      await pollUntil(async () => endedByClient.length, (n) => n === 1, { timeoutMs: 10_000, what: 'the kept-alive connection to close' });
      expect(endedByClient).toEqual([true]);
    } finally {
      allowed.onApplicationShutdown();
      idle.closeAllConnections();
      await new Promise((resolve) => idle.close(resolve));
    }
  });

  it('resolves names through its resolver: relay.internal on loopback serves an upstream, and is refused to a caller', async () => {
    const table = new HostTable({ 'relay.internal': '127.0.0.1' });
    const allowed = fetcher({ OUTBOUND_ALLOW_HOSTS: 'relay.internal' }, table);
    const url = `http://relay.internal:${server.port}/ok`;
    expect((await allowed.fetchBytes('upstream', url, 1024)).body.toString()).toBe(`host=relay.internal:${server.port}`);
    expect((await allowed.request('upstream', url, { maxBytes: 1024, keepAlive: true })).body.toString()).toBe(`host=relay.internal:${server.port}`);
    expect((await allowed.fetchBytes('upstream', `http://relay.internal.:${server.port}/ok`, 1024)).status).toBe(200); // the same host, fully qualified
    const before = server.requests.length;
    const err = await failure(allowed.fetchBytes('caller', url, 1024));
    expect(err.message).toBe('the host relay.internal resolves to a loopback address: only public addresses are fetched (private targets are refused)');
    expect((await failure(allowed.request('caller', url, { maxBytes: 1024, keepAlive: true }))).kind).toBe('refused'); // a kept-alive upstream connection is not lent to a caller's URL
    expect(server.requests.length).toBe(before);
    // without the allow-list, the upstream is refused too
    expect((await failure(fetcher({}, table).fetchBytes('upstream', url, 1024))).kind).toBe('refused');
    allowed.onApplicationShutdown(); // its kept-alive connections
  });

  it('judges a caller\'s URL from the URL alone: non-public literals, localhost, the allow-listed hosts', () => {
    const f = fetcher({ OUTBOUND_ALLOW_HOSTS: 'relay.internal' });
    expect(f.callerUrlRefusal('http://[::127.0.0.1]:8080/x')).toBe('::7f00:1 is an IPv4-compatible IPv6 address');
    expect(f.callerUrlRefusal('http://10.1.2.3/a.png')).toBe('10.1.2.3 is a private address');
    expect(f.callerUrlRefusal('http://169.254.169.254/latest/meta-data/')).toBe('169.254.169.254 is a link-local address');
    expect(f.callerUrlRefusal('http://app.localhost/hook')).toBe('the host app.localhost is a loopback name');
    expect(f.callerUrlRefusal('http://RELAY.internal./x.png')).toBe('the host relay.internal is not public');
    for (const url of ['https://example.com/a.png', 'http://8.8.8.8/x', 'http://[2606:4700:4700::1111]/x', 'https://relay.internal.example.com/x', 'not a url']) {
      expect([url, f.callerUrlRefusal(url)]).toEqual([url, null]);
    }
    expect(fetcher({ ALLOW_PRIVATE_URLS: 'true', OUTBOUND_ALLOW_HOSTS: 'relay.internal' }).callerUrlRefusal('http://relay.internal/x')).toBeNull();
  });

  it('checks every redirect target again', async () => {
    const allowed = fetcher({ OUTBOUND_ALLOW_HOSTS: 'localhost' });
    const err = await failure(allowed.fetchBytes('upstream', `http://localhost:${server.port}/to-ip`, 1024));
    expect([err.kind, err.message]).toEqual(['refused', expect.stringMatching(/127\.0\.0\.1 is a loopback address/)]);
  });

  it('follows at most 3 redirects', async () => {
    const f = fetcher({ ALLOW_PRIVATE_URLS: 'true' });
    expect((await f.fetchBytes('caller', `${server.url}/redirect?n=2`, 1024)).status).toBe(200); // 3 hops
    hops = 0;
    const err = await failure(f.fetchBytes('caller', `${server.url}/redirect?n=3`, 1024)); // 4 hops
    expect([err.kind, err.message]).toEqual(['redirects', 'too many redirects (more than 3)']);
    expect(hops).toBe(4);
  });

  it('caps the bytes read: a declared length over the cap, and a stream that grows past it', async () => {
    const f = fetcher({ ALLOW_PRIVATE_URLS: 'true' });
    expect((await failure(f.fetchBytes('caller', `${server.url}/big-declared`, 1024 * 1024))).kind).toBe('too_large');
    expect((await failure(f.fetchBytes('caller', `${server.url}/big-stream`, 1024 * 1024))).kind).toBe('too_large');
    expect((await f.fetchBytes('caller', `${server.url}/big-stream`, 4 * 1024 * 1024)).body.length).toBe(40 * 64 * 1024);
  });

  it('writes a download to a file as it streams, with the same cap, redirects and status checks', async () => {
    const f = fetcher({ ALLOW_PRIVATE_URLS: 'true' });
    const dir = mkdtempSync(path.join(tmpdir(), 'mgw-fetch-'));
    try {
      const file = path.join(dir, 'body');
      expect(await f.fetchToFile('caller', `${server.url}/big-stream`, 4 * 1024 * 1024, file)).toBe(40 * 64 * 1024);
      expect(statSync(file).size).toBe(40 * 64 * 1024);
      expect(await f.fetchToFile('caller', `${server.url}/redirect?n=1`, 1024, path.join(dir, 'redirected'))).toBeGreaterThan(0);
      expect((await failure(f.fetchToFile('caller', `${server.url}/big-stream`, 1024 * 1024, path.join(dir, 'capped')))).kind).toBe('too_large');
      expect((await failure(f.fetchToFile('caller', `${server.url}/missing`, 1024, path.join(dir, 'missing')))).status).toBe(404);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives up on a server that never answers, within the total timeout', async () => {
    const started = Date.now();
    const err = await failure(fetcher({ ALLOW_PRIVATE_URLS: 'true', OUTBOUND_TIMEOUT_MS: '1500' }).fetchBytes('caller', `${server.url}/hang`, 1024));
    expect(err.kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a non-2xx answer with its status', async () => {
    const err = await failure(fetcher({ ALLOW_PRIVATE_URLS: 'true' }).fetchBytes('caller', `${server.url}/missing`, 1024));
    expect([err.kind, err.status]).toEqual(['status', 404]);
  });
});
