import { Module } from '@nestjs/common';
import { VideoModule } from '../../modules/video/video.module.js';
import { LumaUnsupportedController } from './luma-unsupported.controller.js';
import { LumaVideoController } from './luma-video.controller.js';
import { LumaVideoRecords } from './luma-video.records.js';
import { LumaVideoService } from './luma-video.service.js';
import { LUMA_DOOR } from './luma.door.js';

/**
 * Luma's API as a door, under `/video-b/v1`: video generations (create, get, list, delete, their callbacks),
 * credits and ping, and Luma's routes it does not offer; the records of video tasks, its own and those that
 * store no door (the rendering the registry reads).
 */
@Module({
  imports: [VideoModule],
  controllers: [LumaVideoController, LumaUnsupportedController],
  providers: [LumaVideoService, LumaVideoRecords],
  exports: [LumaVideoRecords],
})
export class LumaDoorModule {
  static readonly door = LUMA_DOOR;
  static readonly renderings = [LumaVideoRecords];
}
