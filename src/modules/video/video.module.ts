import { Module } from '@nestjs/common';
import { VideoController } from './video.controller.js';
import { VideoRepository } from './video.repository.js';
import { VideoService } from './video.service.js';

@Module({ controllers: [VideoController], providers: [VideoRepository, VideoService] })
export class VideoModule {}
