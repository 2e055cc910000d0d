import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { ClipsModule } from '../clips/clips.module.js';
import { AudioController } from './audio.controller.js';
import { AudioKind } from './audio.kind.js';
import { AudioRecords } from './audio.records.js';
import { AudioService } from './audio.service.js';
import { AUDIO_PROVIDERS, type AudioProvider } from './providers/audio-provider.js';
import { RelayAudioProvider } from './providers/relay-audio.provider.js';
import { SandboxAudioProvider } from './providers/sandbox-audio.provider.js';

@Module({
  imports: [ClipsModule, ChannelsModule],
  controllers: [AudioController],
  providers: [
    AudioKind,
    AudioRecords,
    AudioService,
    SandboxAudioProvider,
    RelayAudioProvider,
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
