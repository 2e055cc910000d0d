import { AUDIO_VENDORS, GATEWAY_AUDIO_PROTOCOL } from '../../../src/vendors/audio-vendors.js';
import { EXPAND_VENDORS, expandModelOf, GATEWAY_EXPAND_PROTOCOL } from '../../../src/vendors/expand-vendors.js';
import { GATEWAY_IMAGE_PROTOCOL, IMAGE_VENDORS, imageCatalogOf, imageVendorOf } from '../../../src/vendors/image-vendors.js';
import { GATEWAY_LYRICS_PROTOCOL, LYRICS_VENDORS, lyricsCatalogOf } from '../../../src/vendors/lyrics-vendors.js';
import { GATEWAY_MUSIC_PROTOCOL, MUSIC_VENDORS } from '../../../src/vendors/music-vendors.js';
import { VENDORS } from '../../../src/vendors/registry.js';

/** The image, expand, music, audio and lyrics registries: one adapter per protocol, each a protocol some descriptor declares the operation of, and what a gateway channel goes through. */
describe('the image, expand, music, audio and lyrics registries', () => {
  const declared = (operation: string) => VENDORS.filter((v) => (v.operations as readonly string[]).includes(operation)).map((v) => v.protocol);

  it("each adapter's protocol is a descriptor's that declares its operation, one adapter per protocol", () => {
    for (const [operation, adapters] of [['image', IMAGE_VENDORS], ['expand', EXPAND_VENDORS], ['music', MUSIC_VENDORS], ['audio', AUDIO_VENDORS], ['lyrics', LYRICS_VENDORS]] as const) {
      const protocols = adapters.map((a) => a.protocol);
      expect([operation, new Set(protocols).size]).toEqual([operation, protocols.length]);
      for (const protocol of protocols) expect([operation, protocol, declared(operation).includes(protocol)]).toEqual([operation, protocol, true]);
    }
  });

  it('every vendor that declares lyrics has its lyrics adapter (a gateway goes through the aggregator’s): the aggregators of both shapes, MiniMax, Mureka', () => {
    expect(declared('lyrics').filter((p) => p !== 'gateway').sort()).toEqual(LYRICS_VENDORS.map((a) => a.protocol).sort());
    expect(LYRICS_VENDORS.map((a) => a.protocol)).toEqual(['suno', 'sunoapi', 'minimax', 'mureka']);
  });

  it("a gateway channel goes through the adapter of the door's protocol", () => {
    expect([GATEWAY_IMAGE_PROTOCOL, GATEWAY_EXPAND_PROTOCOL, GATEWAY_MUSIC_PROTOCOL, GATEWAY_AUDIO_PROTOCOL, GATEWAY_LYRICS_PROTOCOL]).toEqual(['openai', 'kling', 'suno', 'suno', 'suno']);
    expect([lyricsCatalogOf('gateway'), lyricsCatalogOf('luma')]).toEqual([lyricsCatalogOf('suno'), []]);
    expect(imageVendorOf('gateway')?.protocol).toBe('openai');
    expect(imageCatalogOf('bfl').map((m) => m.id)).toContain('flux-2-pro');
    expect([imageVendorOf('luma'), imageCatalogOf('luma')]).toEqual([undefined, []]);
    expect([expandModelOf('kling'), expandModelOf('stability'), expandModelOf('gateway')]).toEqual(['kling-expand', 'outpaint', 'expand']);
  });
});
