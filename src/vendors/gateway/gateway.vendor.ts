import { bearerAuth, type ChannelOperation, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';
import { type OperationVendors, operationVendors } from '../operations.js';

/** The operations a gateway channel takes (those with a door another gateway speaks). */
const OPERATIONS = operationVendors().filter((o): o is OperationVendors & { gateway: NonNullable<OperationVendors['gateway']> } => o.gateway !== null);

/** The groups of operations one gateway channel takes (one base URL each), as the operations declare them. */
const GROUPS: ChannelOperation[][] = [];
for (const op of OPERATIONS) if (!GROUPS.some((g) => g.includes(op.name))) GROUPS.push([...op.gateway.group]);

/**
 * A service speaking this interface (Bearer api_key): for each operation, the door its registry entry names
 * (src/vendors/operations.ts: expand's is Kling's, video's Luma's, music's an aggregator's, images OpenAI's);
 * one channel has one base URL, so it takes one group of operations, tested by its operations' probe.
 */
export const GATEWAY: VendorDescriptor = {
  protocol: 'gateway',
  title: 'a service speaking this interface',
  operations: OPERATIONS.map((o) => o.name),
  groups: GROUPS,
  credentials: ['api_key'],
  baseUrl: { rule: `its door's base: ${GROUPS.map((g) => `${OPERATIONS.find((o) => o.name === g[0])!.gateway.base} for ${g.join(' and ')}`).join(', ')}`, example: 'https://other-gateway/video-a' },
  // its content refusals: another gateway words its refusals as this one does: the vendors' own words
  contentRefusal: contentRefusals(),
  pollFloorS: 0,
  probe: (operations) => (OPERATIONS.find((o) => operations.includes(o.name)) ?? OPERATIONS[0]).gateway.probe,
  auth: bearerAuth,
};
