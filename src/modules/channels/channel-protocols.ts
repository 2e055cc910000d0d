import type { AppConfig } from '../../infra/config/app-config.js';
import { UpstreamBusy, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { MINIMAX_PROBE } from '../../vendors/minimax/minimax-video.vendor.js';

/** The operations whose relay goes through channels. */
export const CHANNEL_OPERATIONS = ['expand', 'video', 'audio', 'music'] as const;
export type ChannelOperation = (typeof CHANNEL_OPERATIONS)[number];

/**
 * kling: Kling's API (a JWT from access_key and secret_key), for expand and video; luma: Luma's Dream
 * Machine API (Bearer api_key), for video; runway: Runway's API (Bearer api_key), for video (its own
 * models, Google's Veo, ByteDance's Seedance); minimax: MiniMax's API (Bearer api_key), for video (Hailuo); stability: Stability AI's API (Bearer api_key), for expand (its
 * outpaint); suno: a Suno-style aggregator (Bearer api_key), for audio
 * uploads and music; gateway: a service speaking this interface (Bearer api_key), for any one operation group.
 */
export const CHANNEL_PROTOCOLS = ['kling', 'luma', 'runway', 'minimax', 'stability', 'suno', 'gateway'] as const;
export type ChannelProtocol = (typeof CHANNEL_PROTOCOLS)[number];

/** Operations that share one base URL, and so may share one channel. */
const GROUPS: readonly (readonly ChannelOperation[])[] = [['expand'], ['video'], ['audio', 'music']];
const PROTOCOL_GROUP: Record<Exclude<ChannelProtocol, 'gateway'>, readonly ChannelOperation[]> = { kling: ['expand', 'video'], luma: ['video'], runway: ['video'], minimax: ['video'], stability: ['expand'], suno: ['audio', 'music'] };

/** What a channel's base_url is, per operation group. */
export const BASE_URL_RULE =
  "kling: the base before /v1/ (https://api-singapore.klingai.com), for expand and video alike, or a gateway's https://gateway/video-a for expand; luma: the base before /generations (https://api.lumalabs.ai/dream-machine/v1, or a gateway's https://gateway/video-b/v1); runway: the base before /v1/ (https://api.dev.runwayml.com); minimax: the base before /v1/ (https://api.minimax.io, or https://api.minimaxi.com in mainland China); stability: the base before /v2beta/ (https://api.stability.ai); audio and music: the base before /uploads/audio-url and /submit/music (https://aggregator/suno, or a gateway's https://gateway/music-a)";

/** Why these operations cannot go through one channel of this protocol; null when they can. */
export function operationsProblem(protocol: string, operations: readonly string[]): string | null {
  if (protocol !== 'gateway') {
    const allowed = PROTOCOL_GROUP[protocol as keyof typeof PROTOCOL_GROUP] ?? [];
    const other = operations.filter((o) => !allowed.includes(o as ChannelOperation));
    return other.length ? `operations: a ${protocol} channel takes only ${allowed.join(' and ')} (not ${other.join(', ')})` : null;
  }
  const fits = GROUPS.some((group) => operations.every((o) => group.includes(o as ChannelOperation)));
  return fits ? null : 'operations: one gateway channel has one base URL, so it takes expand, or video, or audio and music (make a channel per group)';
}

/** The credentials a protocol needs. */
export function credentialRule(protocol: string): string {
  return protocol === 'kling' ? 'a kling channel needs credentials.access_key and credentials.secret_key' : `a ${protocol} channel needs credentials.api_key`;
}

/** The protocol of the channel RELAY_<OP>_URL defines. */
export function configProtocolOf(operation: ChannelOperation, config: AppConfig): ChannelProtocol {
  switch (operation) {
    case 'expand':
      return config.relay.klingAccessKey && config.relay.klingSecretKey ? 'kling' : 'gateway';
    case 'video':
      return 'luma';
    case 'audio':
    case 'music':
      return 'suno';
  }
}

/**
 * The cheap real call that tests a channel's credentials: Kling's (or a gateway's) list of expand tasks
 * (of video tasks, for a Kling channel of video alone), one per page; Runway's organization; MiniMax's list of video files; Stability's balance; Luma's (or a gateway's) credits; an aggregator's fetch of a task that does not exist
 * (`notFoundPasses`: its 404 means the credentials were accepted).
 */
export function probeOf(protocol: string, operations: readonly string[]): { path: string; notFoundPasses: boolean; headers?: Record<string, string>; check?: (json: Record<string, unknown>) => void } {
  if (protocol === 'minimax') return MINIMAX_PROBE;
  if (protocol === 'runway') return { path: '/v1/organization', notFoundPasses: false, headers: { 'x-runway-version': '2024-11-06' } };
  if (protocol === 'stability') return { path: '/v1/user/balance', notFoundPasses: false };
  if (protocol === 'kling' && !operations.includes('expand')) return { path: '/v1/videos/text2video?pageNum=1&pageSize=1', notFoundPasses: false };
  if (protocol === 'kling' || (protocol === 'gateway' && operations.includes('expand'))) return { path: '/v1/images/editing/expand?pageNum=1&pageSize=1', notFoundPasses: false };
  if (protocol === 'luma' || (protocol === 'gateway' && operations.includes('video'))) return { path: '/credits', notFoundPasses: false };
  return { path: '/fetch/00000000-0000-4000-8000-000000000000', notFoundPasses: true };
}

/**
 * Suno-style aggregators answer some refusals under HTTP 200 as `{ code: <number>, msg }`: 429 is busy (not
 * taken), 401/403 refuse the credentials and 402 the account's credit (another channel may take the task).
 */
export function checkAggregatorAnswer(json: Record<string, unknown>): void {
  const code = json.code;
  if (typeof code !== 'number') return;
  const words = String(json.msg ?? json.message ?? `code ${code}`);
  if (code === 429) throw new UpstreamBusy(`the upstream is busy: ${words}`, undefined, { status: 200, code });
  if (code === 401 || code === 403) throw new UpstreamRefused(words, code, 'auth');
  if (code === 402) throw new UpstreamRefused(words, code, 'account');
}
