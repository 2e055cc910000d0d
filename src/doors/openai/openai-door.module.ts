import { Module } from '@nestjs/common';
import { ImageModule } from '../../modules/image/image.module.js';
import { OpenAiImagesController, OpenAiImagesUnsupportedController } from './openai-images.controller.js';
import { OpenAiImagesService } from './openai-images.service.js';
import { OpenAiModelsController } from './openai-models.controller.js';
import { OPENAI_DOOR } from './openai.door.js';

/**
 * OpenAI's API as a door, under `/openai/v1`: the Images API (generations, edits, OpenAI's routes it does
 * not offer) and `GET /models`. It answers a request when its task ends and takes no callback, so it renders
 * no image task (their records are the image kind's fallback door's, Kling's).
 */
@Module({
  imports: [ImageModule],
  controllers: [OpenAiImagesUnsupportedController, OpenAiImagesController, OpenAiModelsController],
  providers: [OpenAiImagesService],
})
export class OpenAiDoorModule {
  static readonly door = OPENAI_DOOR;
  static readonly renderings = [];
}
