import ipaddr from 'ipaddr.js';

/** The ranges in words, for messages. */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
  reserved: 'reserved',
};

/** `a link-local address`, `a private address`: the rule that refuses `range`, without the address itself. */
export function describeRange(range: string): string {
  const words = RANGE_WORDS[range] ?? `non-public (${range})`;
  return `${/^[aeiou]/.test(words) ? 'an' : 'a'} ${words} address`;
}

/**
 * Why an address may not be reached, or null for a public unicast address.
 * Loopback, private, link-local (169.254.169.254 among them), unique-local, carrier-grade NAT,
 * multicast, unspecified, reserved and the IPv6 forms that embed IPv4 (mapped, 6to4, Teredo, NAT64)
 * are all refused.
 */
export function nonPublicReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.process(address); // ::ffff:10.0.0.1 is judged as 10.0.0.1
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}
