import { Injectable } from '@nestjs/common';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { AudioUploadStatus, AudioVendor } from '../contracts/audio-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { checkAggregatorAnswer, SUNO_AGGREGATOR } from './suno-aggregator.vendor.js';

interface AggregatorUpload {
  status?: unknown;
  format?: unknown;
  duration?: unknown;
  size_bytes?: unknown;
  sha256?: unknown;
  error?: unknown;
}

/**
 * A Suno-style aggregator's upload by URL (the audio door is its interface): `POST {base}/uploads/audio-url`
 * answers `{ code: "success", data: <id> }`, `GET {base}/uploads/{id}` reports its status (ready with the
 * file's format, duration, size and digest; failed with its error).
 */
@Injectable()
export class SunoAudioVendor implements AudioVendor {
  static readonly protocol = SUNO_AGGREGATOR.protocol;
  readonly protocol = SunoAudioVendor.protocol;
  readonly minPollS = SUNO_AGGREGATOR.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, url: string): Promise<string> {
    const answer = await this.client.call('POST', `${account.baseUrl}/uploads/audio-url`, { body: { url }, auth: account.auth, failFast: true });
    checkAggregatorAnswer(answer.json);
    if (answer.json.code !== 'success' || typeof answer.json.data !== 'string') {
      throw new UnusableAnswer(`the upstream refused the upload: ${String(answer.json.message || answer.json.code || 'no task id returned')}`);
    }
    return answer.json.data;
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<AudioUploadStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/uploads/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once });
    const data = (answer.json.data ?? {}) as AggregatorUpload;
    switch (data.status) {
      case 'ready':
        return { state: 'ready', facts: { format: String(data.format ?? 'audio'), durationS: Number(data.duration ?? 0), sizeBytes: Number(data.size_bytes ?? 0), sha256: String(data.sha256 ?? '') } };
      case 'failed':
        return { state: 'failed', reason: typeof data.error === 'string' && data.error ? data.error : 'no reason given' };
      default:
        return { state: 'working' };
    }
  }
}
