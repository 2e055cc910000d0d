import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { NO_AUTH, type UpstreamAuth } from '../../infra/relay/upstream-client.js';
import type { Channel } from '../../generated/prisma/client.js';
import { bearerAuth } from '../../vendors/contracts/vendor.js';
import { vendorOf } from '../../vendors/registry.js';
import { ChannelsRepository } from './channels.repository.js';
import { ChannelSecrets } from './channel-secrets.js';
import { type ChannelOperation, configProtocolOf } from './channel-protocols.js';
import type { ChannelHandle } from './channel-routing.js';

/**
 * A channel as the calls to its upstream need it (ChannelHandle): its address, its models and its credentials
 * opened: sealed ones from the admin API, RELAY_* for a configuration channel (and for a task accepted before
 * channels existed, which holds none).
 */
@Injectable()
export class ChannelHandles {
  constructor(
    private readonly channels: ChannelsRepository,
    private readonly secrets: ChannelSecrets,
    private readonly config: AppConfig,
  ) {}

  /**
   * The channel a task holds (even disabled or deleted); null when it is gone altogether. A task accepted
   * before channels existed holds none: it was sent to RELAY_<OP>_URL, now a channel of the configuration.
   */
  async heldBy(task: { channelId: string | null }, operation: ChannelOperation): Promise<ChannelHandle | null> {
    if (task.channelId) return this.held(task.channelId);
    const url = this.config.kinds[operation].relayUrl;
    if (!url) return null;
    const protocol = configProtocolOf(operation, this.config);
    return { id: '', name: `RELAY_${operation.toUpperCase()}_URL`, protocol, baseUrl: url, auth: this.configAuth(protocol), models: [], stallAfterS: null };
  }

  /** The channel a task holds (even disabled or deleted); null when it is gone altogether. */
  async held(channelId: string): Promise<ChannelHandle | null> {
    const channel = await this.channels.findChannel(channelId, true);
    return channel ? this.handleOf(channel) : null;
  }

  handleOf(channel: Channel): ChannelHandle {
    return { id: channel.id, name: channel.name, protocol: channel.protocol, baseUrl: channel.baseUrl, auth: this.authOf(channel), models: channel.models, stallAfterS: channel.stallAfterS, frameFit: channel.frameFit };
  }

  /** A configuration channel's auth, by its protocol's descriptor: the variables the vendor declares (Kling's RELAY_KLING_*), else RELAY_API_KEY. */
  private configAuth(protocol: string): UpstreamAuth {
    const { vendorCredentials, apiKey } = this.config.relay;
    return (vendorOf(protocol)?.auth ?? bearerAuth)({ api_key: apiKey, ...vendorCredentials[protocol] });
  }

  /** A configuration channel authenticates with RELAY_*; one from the admin API with its sealed credentials. */
  private authOf(channel: Channel): UpstreamAuth {
    if (channel.source === 'config') return this.configAuth(channel.protocol);
    if (!channel.credentials) return NO_AUTH;
    return (vendorOf(channel.protocol)?.auth ?? bearerAuth)({ ...this.secrets.open(channel.credentials) });
  }
}
