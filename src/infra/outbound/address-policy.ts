import { BlockList, isIPv6 } from 'node:net';
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
  ipv4Compatible: 'IPv4-compatible IPv6',
  rfc6052: 'NAT64 (IPv4-embedded IPv6)',
  rfc6145: 'IPv4-translated IPv6',
  '6to4': '6to4 (IPv4-embedded IPv6)',
  teredo: 'Teredo (IPv4-embedded IPv6)',
};

/** `a link-local address`, `a private address`: the rule that refuses `range`, without the address itself. */
export function describeRange(range: string): string {
  const words = RANGE_WORDS[range] ?? `non-public (${range})`;
  return `${/^[aeiou]/i.test(words) ? 'an' : 'a'} ${words} address`;
}

/**
 * `::/96`, the deprecated IPv4-compatible IPv6 addresses (`::a.b.c.d`, RFC 4291 §2.5.5.1): ipaddr.js
 * reads `::127.0.0.1` as if it were `::ffff:127.0.0.1` and calls `::7f00:1` (the same address, as a URL
 * writes it) public unicast, so the block is checked with Node's own parser.
 */
const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet('::', 96, 'ipv6');

/**
 * Why an address may not be reached, or null for a public unicast address.
 * Loopback, private, link-local (169.254.169.254 among them), unique-local, carrier-grade NAT,
 * multicast, unspecified, reserved and the IPv6 forms that embed IPv4 (mapped, compatible, translated,
 * 6to4, Teredo, NAT64) are all refused.
 */
export function nonPublicReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.process(address); // ::ffff:10.0.0.1 is judged as 10.0.0.1
  const range = parsed.range();
  if (range !== 'unicast') return range;
  if (isIPv6(address) && IPV4_COMPATIBLE.check(address, 'ipv6')) return 'ipv4Compatible';
  return null;
}
