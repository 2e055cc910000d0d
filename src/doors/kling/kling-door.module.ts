import { Module } from '@nestjs/common';
import { ExpandModule } from '../../modules/expand/expand.module.js';
import { ImageModule } from '../../modules/image/image.module.js';
import { ExpandRecords } from './kling-expand.records.js';
import { ExpandController } from './kling-expand.controller.js';
import { ExpandService } from './kling-expand.service.js';
import { KlingImageRecords } from './kling-image.records.js';
import { KlingImagesController } from './kling-images.controller.js';
import { KlingImagesService } from './kling-images.service.js';
import { KLING_DOOR } from './kling.door.js';

/**
 * Kling's API as a door, under `/video-a/v1`: image expand (`images/editing/expand`) and image generation
 * (`images/generations`), in Kling's envelope, states, records, list query and image rules; their tasks'
 * records and callbacks (the renderings the registry reads).
 */
@Module({
  imports: [ExpandModule, ImageModule],
  controllers: [ExpandController, KlingImagesController],
  providers: [ExpandService, ExpandRecords, KlingImagesService, KlingImageRecords],
  exports: [ExpandRecords, KlingImageRecords],
})
export class KlingDoorModule {
  static readonly door = KLING_DOOR;
  static readonly renderings = [ExpandRecords, KlingImageRecords];
}
