import { Module } from '@nestjs/common';
import type { ProviderName } from '../../infra/config/app-config.js';
import type { SpeechVendor } from '../../vendors/contracts/speech-vendor.js';
import { adaptersByProtocol } from '../../vendors/contracts/vendor.js';
import { GATEWAY_SPEECH_PROTOCOL, SPEECH_VENDORS } from '../../vendors/speech-vendors.js';
import { ChannelsModule } from '../channels/channels.module.js';
import { SpeechKind } from './speech.kind.js';
import { SpeechModels } from './speech-models.js';
import { RelaySpeechProvider, SPEECH_VENDOR_ADAPTERS } from './providers/relay-speech.provider.js';
import { SandboxSpeechProvider } from './providers/sandbox-speech.provider.js';
import { SPEECH_PROVIDERS, type SpeechProvider } from './providers/speech-provider.js';

/** The speech operation: its kind, models and providers (its doors, in src/doors/, submit to the kind). */
@Module({
  imports: [ChannelsModule],
  providers: [
    SpeechKind,
    SpeechModels,
    SandboxSpeechProvider,
    RelaySpeechProvider,
    ...SPEECH_VENDORS,
    {
      provide: SPEECH_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway speaks the OpenAI speech door
      useFactory: (...vendors: SpeechVendor[]) => adaptersByProtocol(vendors, GATEWAY_SPEECH_PROTOCOL),
      inject: [...SPEECH_VENDORS],
    },
    {
      provide: SPEECH_PROVIDERS,
      useFactory: (sandbox: SandboxSpeechProvider, relay: RelaySpeechProvider): Record<ProviderName, SpeechProvider> => ({ sandbox, relay }),
      inject: [SandboxSpeechProvider, RelaySpeechProvider],
    },
  ],
  exports: [SpeechKind, SpeechModels],
})
export class SpeechModule {
  static readonly kind = SpeechKind;
}
