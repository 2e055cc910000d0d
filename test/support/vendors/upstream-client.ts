import { loadConfig } from '../../../src/infra/config/app-config.js';
import { SystemHostResolver } from '../../../src/infra/outbound/host-resolver.js';
import { SafeFetchService } from '../../../src/infra/outbound/safe-fetch.service.js';
import { UpstreamClient } from '../../../src/infra/relay/upstream-client.js';
import { Tracing } from '../../../src/infra/tracing/tracing.service.js';

/**
 * The UpstreamClient as the relay has it — the real one, over the real outbound rules (SafeFetchService), with
 * loopback allowed as OUTBOUND_ALLOW_HOSTS allows an operator's hosts — for an adapter's tests against its
 * vendor's fake, with no app and no database.
 */
export function loopbackUpstreamClient(): UpstreamClient {
  const config = loadConfig({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1', OUTBOUND_TIMEOUT_MS: '30000', OUTBOUND_CONNECT_TIMEOUT_MS: '10000' });
  const tracing = new Tracing(config);
  return new UpstreamClient(new SafeFetchService(config, tracing, new SystemHostResolver()), config, tracing);
}
