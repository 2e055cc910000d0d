import type { ExpandVendor } from './contracts/expand-vendor.js';
import { KlingExpandVendor } from './kling/kling-expand.vendor.js';
import { StabilityExpandVendor } from './stability/stability-expand.vendor.js';

/**
 * The registry of expand vendors: one adapter per channel protocol. A gateway speaking this interface's
 * expand door is Kling's protocol (the door is Kling's interface).
 */
export const EXPAND_VENDORS = [KlingExpandVendor, StabilityExpandVendor] as const satisfies readonly { new (...args: never[]): ExpandVendor; readonly protocol: string; readonly model: string }[];

/** The protocol whose adapter a gateway channel's expand goes through. */
export const GATEWAY_EXPAND_PROTOCOL = KlingExpandVendor.protocol;

/** The one expand model a protocol's channel serves (a gateway's, and any other's: `expand`). */
export function expandModelOf(protocol: string): string {
  return EXPAND_VENDORS.find((v) => v.protocol === protocol)?.model ?? 'expand';
}
