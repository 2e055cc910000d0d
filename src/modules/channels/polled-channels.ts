import { Injectable } from '@nestjs/common';
import { ChannelHandles } from './channel-handles.js';
import type { ChannelHandle } from './channel-routing.js';
import type { ChannelOperation } from './channel-protocols.js';
import { ChannelsRepository } from './channels.repository.js';

/**
 * How long the poller asks about a channel's tasks with the channel as it read it: a change of its URL or
 * credentials made on another instance reaches its polls within this long (one made here, at once).
 */
const POLLED_CHANNEL_MS = 2000;

/**
 * The channels whose waiting tasks the poller asks about, as ChannelHandles.heldBy gives them, read again at
 * most every POLLED_CHANNEL_MS and at once after a channel write on this instance. Read at every round, the
 * channel was a statement (and its credentials' auth made anew) two or three times a second per channel
 * while batches came full.
 */
@Injectable()
export class PolledChannels {
  private readonly read = new Map<string, { at: number; writes: number; handle: Promise<ChannelHandle | null> }>();

  constructor(
    private readonly handles: ChannelHandles,
    private readonly channels: ChannelsRepository,
  ) {}

  /** The channel `channelId` (null: RELAY_<OP>_URL, made from the configuration), or null when it is gone altogether. */
  handleOf(channelId: string | null, operation: ChannelOperation): Promise<ChannelHandle | null> {
    if (!channelId) return this.handles.heldBy({ channelId }, operation);
    const now = Date.now();
    const writes = this.channels.writes;
    const cached = this.read.get(channelId);
    if (cached && now - cached.at < POLLED_CHANNEL_MS && cached.writes === writes) return cached.handle;
    for (const [id, entry] of this.read) if (now - entry.at >= POLLED_CHANNEL_MS) this.read.delete(id);
    const handle = this.handles.held(channelId);
    this.read.set(channelId, { at: now, writes, handle });
    handle.catch(() => {
      if (this.read.get(channelId)?.handle === handle) this.read.delete(channelId);
    });
    return handle;
  }
}
