import { isIPv6 } from 'node:net';
import { HostResolver, type ResolvedAddress, SystemHostResolver } from '../../src/infra/outbound/host-resolver.js';

/**
 * A resolver for tests: the names it is given resolve to their address (`relay.internal` → 127.0.0.1),
 * any other through the system's resolver. Given to the application (`startTestApp(env, { hostResolver })`)
 * or to a SafeFetchService; /etc/hosts is never touched.
 */
export class HostTable extends HostResolver {
  private readonly system = new SystemHostResolver();

  constructor(private readonly names: Record<string, string>) {
    super();
  }

  async lookup(host: string): Promise<ResolvedAddress[]> {
    const address = this.names[host.replace(/\.$/, '')]; // relay.internal. is relay.internal, fully qualified
    return address ? [{ address, family: isIPv6(address) ? 6 : 4 }] : this.system.lookup(host);
  }
}
