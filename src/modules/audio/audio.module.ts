import { Module } from '@nestjs/common';
import type { AudioVendor } from '../../vendors/contracts/audio-vendor.js';
import { adaptersByProtocol } from '../../vendors/contracts/vendor.js';
import { AUDIO_VENDORS, GATEWAY_AUDIO_PROTOCOL } from '../../vendors/audio-vendors.js';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { ClipsModule } from '../clips/clips.module.js';
import { AudioKind } from './audio.kind.js';
import { AUDIO_PROVIDERS, type AudioProvider } from './providers/audio-provider.js';
import { AUDIO_VENDOR_ADAPTERS, RelayAudioProvider } from './providers/relay-audio.provider.js';
import { SandboxAudioProvider } from './providers/sandbox-audio.provider.js';

@Module({
  imports: [ClipsModule, ChannelsModule],
  providers: [
    AudioKind,
    SandboxAudioProvider,
    RelayAudioProvider,
    ...AUDIO_VENDORS,
    {
      provide: AUDIO_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway speaks the door's interface, a Suno-style aggregator's
      useFactory: (...vendors: AudioVendor[]) => adaptersByProtocol(vendors, GATEWAY_AUDIO_PROTOCOL),
      inject: [...AUDIO_VENDORS],
    },
    {
      provide: AUDIO_PROVIDERS,
      useFactory: (sandbox: SandboxAudioProvider, relay: RelayAudioProvider): Record<ProviderName, AudioProvider> => ({ sandbox, relay }),
      inject: [SandboxAudioProvider, RelayAudioProvider],
    },
  ],
  exports: [AudioKind],
})
export class AudioModule {
  static readonly kind = AudioKind;
}
