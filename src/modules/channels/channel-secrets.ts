import { Injectable } from '@nestjs/common';
import { SealingKeys } from '../../infra/crypto/sealing-keys.js';
import type { ChannelCredentialsDto } from './dto/channel.dto.js';

/** Seals channel credentials for storage and opens them for a call, with the service's sealing key (CHANNEL_SECRET_KEY). */
@Injectable()
export class ChannelSecrets {
  constructor(private readonly sealing: SealingKeys) {}

  seal(credentials: ChannelCredentialsDto): Uint8Array<ArrayBuffer> {
    return this.sealing.seal(JSON.stringify(credentials));
  }

  /** Throws when no key of this instance opens them. */
  open(sealed: Uint8Array): ChannelCredentialsDto {
    return JSON.parse(this.sealing.open(sealed)) as ChannelCredentialsDto;
  }
}
