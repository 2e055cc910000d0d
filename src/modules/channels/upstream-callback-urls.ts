import { createHmac, timingSafeEqual } from 'node:crypto';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { AppSecretsRepository } from '../../infra/prisma/app-secrets.repository.js';

/** Where upstreams call back, under UPSTREAM_CALLBACK_BASE_URL: one route per task, with its token. */
export const UPSTREAM_CALLBACK_PATH = '/upstream-callbacks';

/**
 * The addresses upstreams are asked to call back when a task of theirs changes (Kling's and Luma's
 * `callback_url`, the aggregators' `notify_hook`): `{UPSTREAM_CALLBACK_BASE_URL}/upstream-callbacks/{task id}/{token}`,
 * the token an HMAC of the task id under a secret of the service's own, so it cannot be guessed and
 * needs no storage. Without UPSTREAM_CALLBACK_BASE_URL (a gateway upstreams cannot reach) there is none.
 */
@Injectable()
export class UpstreamCallbackUrls implements OnModuleInit {
  private key?: Buffer;

  constructor(
    private readonly config: AppConfig,
    private readonly secrets: AppSecretsRepository,
  ) {}

  async onModuleInit(): Promise<void> {
    this.key = Buffer.from(await this.secrets.findOrCreate('upstream_callback_key'), 'base64url');
  }

  /** The URL the upstream of task `taskId` calls back; undefined when upstreams cannot reach this gateway. */
  urlFor(taskId: string): string | undefined {
    const base = this.config.relay.callbackBaseUrl;
    return base ? `${base}${UPSTREAM_CALLBACK_PATH}/${taskId}/${this.token(taskId)}` : undefined;
  }

  /** Whether `token` is the one urlFor gave task `taskId` (compared in constant time). */
  verify(taskId: string, token: string): boolean {
    const expected = Buffer.from(this.token(taskId));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private token(taskId: string): string {
    if (!this.key) throw new Error('the upstream callback key is not loaded yet');
    return createHmac('sha256', this.key).update(taskId).digest('base64url');
  }
}
