import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { ImageModels } from '../../modules/image/image-models.js';
import { SpeechModels } from '../../modules/speech/speech-models.js';
import { VideoModels } from '../../modules/video/video-models.js';
import type { OpenAiModelDto, OpenAiModelListDto } from './dto/openai-model.dto.js';

/**
 * OpenAI's Models API over what this door serves: every model callers may ask for through it (its images,
 * videos and speech; with the sandbox, every vendor's as its catalog describes it, and `sandbox`), once per
 * name, as OpenAI's `GET /v1/models` lists its own; `retrieve` one by name, or OpenAI's 404 `model_not_found`.
 */
@Injectable()
export class OpenAiModelsService {
  constructor(
    private readonly images: ImageModels,
    private readonly videos: VideoModels,
    private readonly speech: SpeechModels,
  ) {}

  async list(): Promise<OpenAiModelListDto> {
    const offered = [...(await this.images.offered()), ...(await this.videos.offered()), ...(await this.speech.offered())];
    const byName = new Map<string, OpenAiModelDto>();
    for (const m of offered) if (!byName.has(m.name)) byName.set(m.name, { id: m.name, object: 'model', created: 0, owned_by: m.vendor, declared: m.declared === true });
    return { object: 'list', data: [...byName.values()] };
  }

  async retrieve(id: string): Promise<OpenAiModelDto> {
    const found = (await this.list()).data.find((m) => m.id === id);
    if (!found) throw new AppError('NOT_FOUND', `The model '${id}' does not exist or you do not have access to it.`, undefined, { param: 'model', rule: 'value' });
    return found;
  }
}
