import { lookup as dnsLookup } from 'node:dns/promises';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/**
 * Where SafeFetchService resolves host names: the system's resolver (`dns.lookup`, as the rest of the
 * process sees names) unless the application is given another (a test's table that maps a name such as
 * `relay.internal` to loopback, without touching /etc/hosts). Every address it answers is checked
 * against the outbound rules before a connection opens, and the connection is pinned to it.
 */
export abstract class HostResolver {
  /** Every address of `host` (a name, never an IP literal); rejects when it has none or cannot be resolved. */
  abstract lookup(host: string): Promise<ResolvedAddress[]>;
}

/** The system's resolver: `dns.lookup` with every address, in the resolver's order. */
export class SystemHostResolver extends HostResolver {
  lookup(host: string): Promise<ResolvedAddress[]> {
    return dnsLookup(host, { all: true, verbatim: true });
  }
}
