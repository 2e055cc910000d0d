import { Module } from '@nestjs/common';
import { ExpandModule } from '../../modules/expand/expand.module.js';
import { ImageModule } from '../../modules/image/image.module.js';
import { VideoModule } from '../../modules/video/video.module.js';
import { ExpandRecords } from './kling-expand.records.js';
import { ExpandController } from './kling-expand.controller.js';
import { ExpandService } from './kling-expand.service.js';
import { KlingImageRecords } from './kling-image.records.js';
import { KlingImagesController } from './kling-images.controller.js';
import { KlingImagesService } from './kling-images.service.js';
import { KlingVideoRecords } from './kling-video.records.js';
import { KlingVideosController } from './kling-videos.controller.js';
import { KlingVideosService } from './kling-videos.service.js';
import { KLING_DOOR } from './kling.door.js';

/**
 * Kling's API as a door, under `/video-a/v1`: image expand (`images/editing/expand`), image generation
 * (`images/generations`) and video generation (`videos/text2video`, `videos/image2video`), in Kling's
 * envelope, states, records, list query and image rules; their tasks' records and callbacks (the renderings
 * the registry reads).
 */
@Module({
  imports: [ExpandModule, ImageModule, VideoModule],
  controllers: [ExpandController, KlingImagesController, KlingVideosController],
  providers: [ExpandService, ExpandRecords, KlingImagesService, KlingImageRecords, KlingVideosService, KlingVideoRecords],
  exports: [ExpandRecords, KlingImageRecords, KlingVideoRecords],
})
export class KlingDoorModule {
  static readonly door = KLING_DOOR;
  static readonly renderings = [ExpandRecords, KlingImageRecords, KlingVideoRecords];
}
