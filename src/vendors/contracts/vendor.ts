import { bearerKey, type CallOptions, NO_AUTH, type UpstreamAuth, UpstreamRefused } from '../../infra/relay/upstream-client.js';

/** The account a call goes to: its base URL and how it authenticates (never logged). */
export interface VendorAccount {
  baseUrl: string;
  auth: UpstreamAuth;
}

/** The upstream's answer cannot be used (a create without an id): the task fails with these words. Every operation's adapters throw it. */
export class UnusableAnswer extends Error {}

/** The operations whose relay goes through channels. */
export const CHANNEL_OPERATIONS = ['expand', 'video', 'audio', 'music', 'image', 'speech', 'lyrics', 'stems'] as const;
export type ChannelOperation = (typeof CHANNEL_OPERATIONS)[number];

/** The cheap real call that tests a channel's credentials. */
export interface VendorProbe {
  path: string;
  /** A 404 means the credentials were accepted (a fetch of a task that does not exist). */
  notFoundPasses: boolean;
  headers?: Record<string, string>;
  /** The vendor's reading of an answer that is not a success (the UpstreamClient's `refusal`). */
  refusal?: CallOptions['refusal'];
  /** Reads an answer whose refusal comes under HTTP 200 in the vendor's own shape: throws as the UpstreamClient throws. */
  check?: (json: Record<string, unknown>) => void;
}

/**
 * What one vendor is to the channels, the console and the docs: its protocol name, the operations it
 * serves, the credentials it takes and how it authenticates with them, its base URL rule with an example,
 * and the cheap call that tests an account. One per vendor folder; `src/vendors/registry.ts` lists them.
 */
export interface VendorDescriptor {
  /** The channel protocol, as channels name it. */
  readonly protocol: string;
  /** Its name in a sentence: "Kling's API". */
  readonly title: string;
  /** What it makes, in a few words, where more than its operations say ("its models, Google's Veo, …"). */
  readonly makes?: string;
  readonly operations: readonly ChannelOperation[];
  /** The operations one channel may take together (a gateway's one base URL serves one group); by default all of `operations`. */
  readonly groups?: readonly (readonly ChannelOperation[])[];
  /** The credential fields a channel of it needs, all of them. */
  readonly credentials: readonly string[];
  /** What a channel's base_url is: the part of the vendor's URLs before its paths, and an example. */
  readonly baseUrl: { readonly rule: string; readonly example: string };
  probe(operations: readonly string[]): VendorProbe;
  /**
   * The variables that hold a configuration channel's credentials (RELAY_<OP>_URL), by credential field, set
   * together and validated at start with the rest; set, the configuration channel of each operation in
   * `configFor` speaks its protocol (the others keep theirs: RELAY_VIDEO_URL stays a Luma-speaking gateway
   * when Kling's are set for RELAY_EXPAND_URL). Vendors without them take RELAY_API_KEY as `api_key`.
   */
  readonly configCredentials?: Readonly<Record<string, string>>;
  readonly configFor?: readonly ChannelOperation[];
  /**
   * How its moderation's refusals look (`contentRefusals(its codes)`): what, in a failed task's reason or a refused
   * request's words as its adapters give them, says it refused what was asked rather than failed for a reason of
   * its own. One classification for every operation (`refusesContent` in src/vendors/registry.ts): a content
   * refusal ends the task with the vendor's words unless RELAY_FAILOVER_ON_CONTENT; any other failure fails over.
   */
  readonly contentRefusal: RegExp;
  /** How often one of its tasks may be asked about, at least (seconds; 0: it publishes no limit, the schedule alone decides). Every operation's adapter polls by it. */
  readonly pollFloorS: number;
  auth(credentials: Readonly<Record<string, string | undefined>>): UpstreamAuth;
}

/**
 * A probe's check from a reader of the vendor's answers: only a refusal of the credentials or of the
 * account's credit fails a test (a busy account, or a refusal of the probe's own parameters, has had its
 * credentials accepted).
 */
export function credentialRefusals(read: (json: Record<string, unknown>) => unknown): (json: Record<string, unknown>) => void {
  return (json) => {
    try {
      read(json);
    } catch (err) {
      if (err instanceof UpstreamRefused && err.accountRefused) throw err;
    }
  };
}

/** Bearer auth from `api_key` (most vendors). */
export function bearerAuth(credentials: Readonly<Record<string, string | undefined>>): UpstreamAuth {
  return credentials.api_key ? bearerKey(credentials.api_key) : NO_AUTH;
}

/** An operation's adapters by the protocol they speak, a gateway channel's being the adapter of the protocol its door is (a gateway speaks the door's interface). */
export function adaptersByProtocol<T extends { protocol: string }>(adapters: readonly T[], gatewaySpeaks: string): Record<string, T> {
  const byProtocol: Record<string, T> = Object.fromEntries(adapters.map((a) => [a.protocol, a]));
  return { ...byProtocol, gateway: byProtocol[gatewaySpeaks] };
}
