import { afterEach, jest } from '@jest/globals';
import type { ChannelHandles } from '../../src/modules/channels/channel-handles.js';
import type { ChannelHandle } from '../../src/modules/channels/channel-routing.js';
import type { ChannelsRepository } from '../../src/modules/channels/channels.repository.js';
import { PolledChannels } from '../../src/modules/channels/polled-channels.js';

/** PolledChannels over stand-ins: channel handles that count its reads of the channel (failing once asked to), and the repository's count of writes. */
function polled() {
  const reads: string[] = [];
  let failNext = false;
  const handles = {
    held: async (id: string) => {
      reads.push(id);
      if (failNext) {
        failNext = false;
        throw new Error('the database went away');
      }
      return { id, name: `channel ${reads.length}` } as ChannelHandle;
    },
    heldBy: async () => ({ id: '', name: 'RELAY_EXPAND_URL' }) as ChannelHandle,
  };
  const repository = { writes: 0 };
  const channels = new PolledChannels(handles as unknown as ChannelHandles, repository as unknown as ChannelsRepository);
  return { channels, reads, repository, failOnce: () => (failNext = true) };
}

describe('PolledChannels: the poller reads a channel at most every 2 s, and at once after a write here', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('answers the channel as read for 2 s, then reads it again', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const { channels, reads } = polled();
    const first = await channels.handleOf('c1', 'expand');
    jest.setSystemTime(1_000_000 + 1999);
    expect(await channels.handleOf('c1', 'expand')).toBe(first);
    expect(reads).toEqual(['c1']);
    jest.setSystemTime(1_000_000 + 2000);
    expect((await channels.handleOf('c1', 'expand'))?.name).toBe('channel 2');
    expect(reads).toEqual(['c1', 'c1']);
  });

  it('reads it again at once after a channel write on this instance (an admin changed its URL or credentials)', async () => {
    const { channels, reads, repository } = polled();
    await channels.handleOf('c1', 'expand');
    await channels.handleOf('c1', 'expand');
    expect(reads).toEqual(['c1']);
    repository.writes++;
    expect((await channels.handleOf('c1', 'expand'))?.name).toBe('channel 2');
    expect(reads).toEqual(['c1', 'c1']);
  });

  it('keeps each channel apart, keeps no failed read, and reads a configuration channel from the configuration', async () => {
    const { channels, reads, failOnce } = polled();
    failOnce();
    await expect(channels.handleOf('c1', 'expand')).rejects.toThrow('the database went away');
    expect((await channels.handleOf('c1', 'expand'))?.id).toBe('c1');
    expect((await channels.handleOf('c2', 'expand'))?.id).toBe('c2');
    expect(reads).toEqual(['c1', 'c1', 'c2']);
    expect((await channels.handleOf(null, 'expand'))?.name).toBe('RELAY_EXPAND_URL');
  });
});
