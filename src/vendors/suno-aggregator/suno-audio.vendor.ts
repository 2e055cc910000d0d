import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { AudioUploadStatus, AudioVendor } from '../contracts/audio-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { checkAggregatorAnswer, SUNO_AGGREGATOR } from './suno-aggregator.vendor.js';

/** An aggregator's answer: `{code: "success", message, data}`. */
const ENVELOPE = z.looseObject({ code: z.unknown(), message: z.unknown().optional(), data: z.unknown().optional() });

/** An upload as `GET /uploads/{id}` answers it in its `data`: its `status` (pending, ready, failed, or another state of the work going on). */
const UPLOAD = z.object({ data: z.looseObject({ status: z.string() }) });
/** A ready upload's facts: the file's `format`, `duration` (seconds), `size_bytes` and `sha256`. */
const READY = z.object({ data: z.object({ format: z.string(), duration: z.number().nonnegative(), size_bytes: z.number().int().nonnegative(), sha256: z.string() }) });
/** A failed upload's `error` (words; absent or of another type: none given). */
const FAILED = z.object({ data: z.object({ error: z.string().nullish().catch(undefined) }) });

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
    const answer = await this.client.call('POST', `${account.baseUrl}/uploads/audio-url`, { body: sunoUploadBody(url), auth: account.auth, failFast: true });
    return sunoUploaded(answer.json);
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<AudioUploadStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/uploads/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once });
    return sunoUploadStatus(answer.json);
  }
}

/** An upload by URL as `POST /uploads/audio-url` takes it. */
export function sunoUploadBody(url: string): Record<string, unknown> {
  return { url };
}

/** The upload's id an aggregator answered (`{code: "success", data: <id>}`); a refusal under HTTP 200 thrown as the client would; else unusable, in its words. */
export function sunoUploaded(json: Record<string, unknown>): string {
  checkAggregatorAnswer(json);
  const answer = readAnswer(ENVELOPE, json, 'the upload');
  if (answer.code !== 'success' || typeof answer.data !== 'string' || !answer.data) {
    throw new UnusableAnswer(`the upstream refused the upload: ${String(answer.message || answer.code || 'no task id returned')}`);
  }
  return answer.data;
}

/** An upload's state as its query answers it: ready with its facts, failed with its words, else still being read. */
export function sunoUploadStatus(json: Record<string, unknown>): AudioUploadStatus {
  checkAggregatorAnswer(json);
  const { status } = readAnswer(UPLOAD, json, 'the upload query').data;
  if (status === 'ready') {
    const facts = readAnswer(READY, json, 'the upload query').data;
    return { state: 'ready', facts: { format: facts.format, durationS: facts.duration, sizeBytes: facts.size_bytes, sha256: facts.sha256 } };
  }
  if (status === 'failed') return { state: 'failed', reason: readAnswer(FAILED, json, 'the upload query').data.error || 'no reason given' };
  return { state: 'working' };
}
