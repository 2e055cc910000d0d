import ipaddr from 'ipaddr.js';

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
  return range === 'unicast' ? null : `${address} is a ${range} address`;
}
