import ipaddr from 'ipaddr.js';

/**
 * Express's `trust proxy` setting: which peers' X-Forwarded-For (and X-Forwarded-Proto) are believed when
 * the client's address (`req.ip`) and protocol are read. false: none (the socket's address is the
 * client's); a number: that many proxies in front, each appending to X-Forwarded-For; a list: the
 * proxies' addresses, subnets (CIDR) or Express's names for ranges; true: every peer (only when nothing
 * but a proxy can reach the service: otherwise any client names its own address).
 */
export type TrustProxy = boolean | number | string[];

/** Express's (proxy-addr's) names for address ranges. */
const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** TRUST_PROXY's value; a problem is pushed for anything else. Unset: false. */
export function parseTrustProxy(raw: string | undefined, problems: string[]): TrustProxy | undefined {
  if (raw === undefined) return false;
  const value = raw.trim();
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops <= 100) return hops;
  }
  const items = value.split(',').map((s) => s.trim());
  const bad = items.filter((item) => !NAMED_RANGES.includes(item) && !isAddressOrSubnet(item));
  if (items.length === 0 || bad.length > 0) {
    problems.push(
      `TRUST_PROXY must be false, true, the number of proxies in front of the service (0 to 100), or comma-separated proxy addresses, subnets (CIDR) and ${NAMED_RANGES.join(', ')} (got ${JSON.stringify(raw)}; not understood: ${bad.map((b) => JSON.stringify(b)).join(', ')})`,
    );
    return undefined;
  }
  return items;
}

/** An IPv4 address in its four-part decimal form or an IPv6 address, with an optional /prefix within its length. */
function isAddressOrSubnet(item: string): boolean {
  const [address, prefix, extra] = item.split('/');
  if (extra !== undefined) return false;
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (!v4 && !ipaddr.IPv6.isValid(address)) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (v4 ? 32 : 128));
}
