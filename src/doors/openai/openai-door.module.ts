import { Module } from '@nestjs/common';
import { ImageModule } from '../../modules/image/image.module.js';
import { VideoModule } from '../../modules/video/video.module.js';
import { OpenAiImagesController, OpenAiImagesUnsupportedController } from './openai-images.controller.js';
import { OpenAiImagesService } from './openai-images.service.js';
import { OpenAiModelsController } from './openai-models.controller.js';
import { OpenAiModelsService } from './openai-models.service.js';
import { SpeechModule } from '../../modules/speech/speech.module.js';
import { OpenAiVideoRecords } from './openai-video.records.js';
import { OpenAiVideosController } from './openai-videos.controller.js';
import { OpenAiVideosService } from './openai-videos.service.js';
import { OpenAiVideosUnsupportedController } from './openai-videos-unsupported.controller.js';
import { OPENAI_DOOR } from './openai.door.js';

/**
 * OpenAI's API as a door, under `/openai/v1`: the Images API (generations, edits, OpenAI's routes it does
 * not offer), the Videos API (create, retrieve, list, delete, content, and the routes it does not offer) and
 * `GET /models` (and `/models/{model}`: its image, video and speech models). Its Images door answers a request when its task ends and takes no callback, so it renders no
 * image task (their records are the image kind's fallback door's, Kling's); its video objects are the records
 * of its own video tasks (GET /tasks/{id}; it takes no callback either). The routes that refuse come first, so
 * `videos/characters/{id}` is not read as a video's id.
 */
@Module({
  imports: [ImageModule, VideoModule, SpeechModule],
  controllers: [OpenAiImagesUnsupportedController, OpenAiImagesController, OpenAiModelsController, OpenAiVideosUnsupportedController, OpenAiVideosController],
  providers: [OpenAiImagesService, OpenAiModelsService, OpenAiVideosService, OpenAiVideoRecords],
  exports: [OpenAiVideoRecords],
})
export class OpenAiDoorModule {
  static readonly door = OPENAI_DOOR;
  static readonly renderings = [OpenAiVideoRecords];
}
