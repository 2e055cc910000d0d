import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { SecretBox } from '../../infra/crypto/secret-box.js';
import type { ChannelCredentialsDto } from './dto/channel.dto.js';

/** The one holder of CHANNEL_SECRET_KEY: seals channel credentials for storage and opens them for a call. */
@Injectable()
export class ChannelSecrets {
  private readonly box: SecretBox | null;

  constructor(config: AppConfig) {
    this.box = config.relay.channelSecretKey ? new SecretBox(config.relay.channelSecretKey) : null;
  }

  /** Whether CHANNEL_SECRET_KEY is set. */
  get available(): boolean {
    return this.box !== null;
  }

  seal(credentials: ChannelCredentialsDto): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.require().seal(JSON.stringify(credentials)));
  }

  /** Throws when the key is missing or does not open them. */
  open(sealed: Uint8Array): ChannelCredentialsDto {
    return JSON.parse(this.require().open(sealed)) as ChannelCredentialsDto;
  }

  private require(): SecretBox {
    if (!this.box) throw new Error('channel credentials are stored but CHANNEL_SECRET_KEY is not set');
    return this.box;
  }
}
