import { Module } from '@nestjs/common';
import type { ProviderName } from '../../infra/config/app-config.js';
import type { ImageVendor } from '../../vendors/contracts/image-vendor.js';
import { adaptersByProtocol } from '../../vendors/contracts/vendor.js';
import { GATEWAY_IMAGE_PROTOCOL, IMAGE_VENDORS } from '../../vendors/image-vendors.js';
import { ChannelsModule } from '../channels/channels.module.js';
import { ImageKind } from './image.kind.js';
import { ImageInputs } from './image-inputs.js';
import { ImageModels } from './image-models.js';
import { OpenAiImagesController, OpenAiImagesUnsupportedController } from './openai-images.controller.js';
import { OpenAiImagesService } from './openai-images.service.js';
import { OpenAiModelsController } from './openai-models.controller.js';
import { IMAGE_PROVIDERS, type ImageProvider } from './providers/image-provider.js';
import { IMAGE_VENDOR_ADAPTERS, RelayImageProvider } from './providers/relay-image.provider.js';
import { SandboxImageProvider } from './providers/sandbox-image.provider.js';

@Module({
  imports: [ChannelsModule],
  controllers: [OpenAiImagesUnsupportedController, OpenAiImagesController, OpenAiModelsController],
  providers: [
    ImageKind,
    ImageInputs,
    ImageModels,
    OpenAiImagesService,
    SandboxImageProvider,
    RelayImageProvider,
    ...IMAGE_VENDORS,
    {
      provide: IMAGE_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway speaks the OpenAI Images door
      useFactory: (...vendors: ImageVendor[]) => adaptersByProtocol(vendors, GATEWAY_IMAGE_PROTOCOL),
      inject: [...IMAGE_VENDORS],
    },
    {
      provide: IMAGE_PROVIDERS,
      useFactory: (sandbox: SandboxImageProvider, relay: RelayImageProvider): Record<ProviderName, ImageProvider> => ({ sandbox, relay }),
      inject: [SandboxImageProvider, RelayImageProvider],
    },
  ],
  exports: [ImageKind, ImageInputs, ImageModels],
})
export class ImageModule {
  static readonly kind = ImageKind;
}
