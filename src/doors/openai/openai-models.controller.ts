import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { OpenAiModelDto, OpenAiModelListDto } from './dto/openai-model.dto.js';
import { OpenAiModelsService } from './openai-models.service.js';

@ApiTags('image generation')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('openai/v1/models')
export class OpenAiModelsController {
  constructor(private readonly models: OpenAiModelsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listOpenAiModels',
    summary: 'The models you can ask for through OpenAI\'s door (OpenAI models.list)',
    description: "The image, video and speech models the configured channels serve, once per name (with the sandbox, every vendor's as its catalog describes it, and `sandbox`); a gateway channel's test reads it.",
  })
  @ApiOkResponse({ type: OpenAiModelListDto })
  @ApiErrors(KEYED_ROUTE_ERRORS, { openAi: true })
  list(): Promise<OpenAiModelListDto> {
    return this.models.list();
  }

  @Get(':model')
  @ApiOperation({ operationId: 'retrieveOpenAiModel', summary: 'One model you can ask for (OpenAI models.retrieve)', description: "One of the list's models by its name; 404 `model_not_found` (param `model`) for any other." })
  @ApiParam({ name: 'model', example: 'gpt-image-1' })
  @ApiOkResponse({ type: OpenAiModelDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'], { openAi: true })
  retrieve(@Param('model') model: string): Promise<OpenAiModelDto> {
    return this.models.retrieve(model);
  }
}
