import { Global, Module } from '@nestjs/common';
import { MediaController } from './media.controller.js';
import { MediaRepository } from './media.repository.js';
import { MediaService } from './media.service.js';

@Global()
@Module({ controllers: [MediaController], providers: [MediaRepository, MediaService], exports: [MediaService] })
export class MediaModule {}
