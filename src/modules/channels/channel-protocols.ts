import { withArticle } from '../../common/words.js';
import type { AppConfig } from '../../infra/config/app-config.js';
import { CHANNEL_OPERATIONS, type ChannelOperation, type VendorDescriptor, type VendorProbe } from '../../vendors/contracts/vendor.js';
import { VENDORS, vendorOf } from '../../vendors/registry.js';

export { CHANNEL_OPERATIONS, type ChannelOperation };

/** The channel protocols: one per vendor of the registry (src/vendors/registry.ts). */
export const CHANNEL_PROTOCOLS: readonly string[] = VENDORS.map((v) => v.protocol);

/** What a channel's base_url is, per protocol (the channel DTO's description). */
export const BASE_URL_RULE = VENDORS.map((v) => `${v.protocol}: ${v.baseUrl.rule} (${v.baseUrl.example})`).join('; ');

/** What each protocol is, what it serves and the credentials it takes (the channel DTO's description). */
export const PROTOCOLS_IN_WORDS = VENDORS.map((v) => `${v.protocol}: ${v.title}${v.makes ? ` (${v.makes})` : ''}, for ${servesInWords(v)}; credentials ${v.credentials.join(' and ')}`).join('; ');

function servesInWords(v: VendorDescriptor): string {
  return v.groups ? `one of ${v.groups.map((g) => g.join(' and ')).join(', or ')}` : v.operations.join(' and ');
}

/** Why these operations cannot go through one channel of this protocol; null when they can. */
export function operationsProblem(protocol: string, operations: readonly string[]): string | null {
  const vendor = vendorOf(protocol);
  if (!vendor) return null; // the protocol's own rule refuses it
  if (vendor.groups) {
    const fits = vendor.groups.some((group) => operations.every((o) => group.includes(o as ChannelOperation)));
    return fits ? null : `operations: one ${protocol} channel has one base URL, so it takes ${vendor.groups.map((g) => g.join(' and ')).join(', or ')} (make a channel per group)`;
  }
  const other = operations.filter((o) => !vendor.operations.includes(o as ChannelOperation));
  return other.length ? `operations: ${withArticle(protocol)} channel takes only ${inWords(vendor.operations)} (not ${other.join(', ')})` : null;
}

/** The credentials a protocol needs, in words. */
export function credentialRule(protocol: string): string {
  const fields = vendorOf(protocol)?.credentials ?? ['api_key'];
  return `${withArticle(protocol)} channel needs ${fields.map((f) => `credentials.${f}`).join(' and ')}`;
}

/** Whether `credentials` has every field the protocol needs. */
export function hasCredentials(protocol: string, credentials: Readonly<Record<string, string | undefined>>): boolean {
  return (vendorOf(protocol)?.credentials ?? ['api_key']).every((f) => Boolean(credentials[f]));
}

/**
 * The protocol of the channel RELAY_<OP>_URL defines: the vendor whose credential variables are set for that
 * operation (its `configFor`), else what the operation declares (its definition's `channels.configProtocol`).
 */
export function configProtocolOf(operation: ChannelOperation, config: AppConfig): string {
  const declared = config.kinds[operation]?.configProtocol;
  const chosen = VENDORS.find((v) => v.configFor?.includes(operation) && config.relay.vendorCredentials[v.protocol])?.protocol ?? declared;
  if (!chosen) throw new Error(`operation ${operation} declares no protocol for RELAY_${operation.toUpperCase()}_URL (its definition's settings.channels)`);
  return chosen;
}

/** The variables that hold a configuration channel's credentials, by credential field (shown in its hint, never their values). */
export function configCredentialVariables(protocol: string, config: AppConfig): Record<string, string> {
  const declared = vendorOf(protocol)?.configCredentials;
  if (declared) return { ...declared };
  return config.relay.apiKey ? { api_key: 'RELAY_API_KEY' } : {};
}

/** The cheap real call that tests a channel's credentials (its vendor's). */
export function probeOf(protocol: string, operations: readonly string[]): VendorProbe {
  const vendor = vendorOf(protocol);
  if (!vendor) throw new Error(`no vendor speaks protocol ${protocol}`);
  return vendor.probe(operations);
}

/** `a`, `a and b`, `a, b and c`. */
function inWords(items: readonly string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items.at(-1)}` : items.join('');
}
