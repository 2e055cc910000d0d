import { Module } from '@nestjs/common';
import { AudioController } from './audio.controller.js';
import { AudioRepository } from './audio.repository.js';
import { AudioService } from './audio.service.js';

@Module({ controllers: [AudioController], providers: [AudioRepository, AudioService] })
export class AudioModule {}
