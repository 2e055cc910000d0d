import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ModelListDto } from './dto/model.dto.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { modelList } from './video-model-list.js';
import { VideoModels } from './video-models.js';

@ApiTags('models')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('models')
export class VideoModelsController {
  constructor(
    private readonly models: VideoModels,
    private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'listModels',
    summary: 'The models you can ask for',
    description: "Each video model the configured channels serve (or, with the sandbox, every vendor's model as its catalog describes it, and the model `sandbox`, which makes anything the sandbox renders when a request names it), what it can make and its price in credits. A request no model can make is refused with 400, naming the field and the models that could.",
  })
  @ApiOkResponse({ type: ModelListDto })
  @ApiErrors(KEYED_ROUTE_ERRORS)
  async list(): Promise<ModelListDto> {
    return modelList(await this.models.offered(), this.config.kinds.video.prices.second);
  }
}
