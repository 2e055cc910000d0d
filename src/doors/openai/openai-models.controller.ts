import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { OpenAiModelListDto } from './dto/openai-model.dto.js';
import { OpenAiImagesService } from './openai-images.service.js';

@ApiTags('image generation')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('openai/v1/models')
export class OpenAiModelsController {
  constructor(private readonly images: OpenAiImagesService) {}

  @Get()
  @ApiOperation({
    operationId: 'listOpenAiModels',
    summary: 'The image models you can ask for (OpenAI models.list)',
    description: "The image models the configured channels serve (with the sandbox, every vendor's as its catalog describes it, and `sandbox`); a gateway channel's test reads it.",
  })
  @ApiOkResponse({ type: OpenAiModelListDto })
  @ApiErrors(KEYED_ROUTE_ERRORS, { openAi: true })
  list(): Promise<OpenAiModelListDto> {
    return this.images.listModels();
  }
}
