import { Body, Controller, HttpCode, Post, Res, UploadedFiles } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiExcludeController, ApiExtraModels, ApiOkResponse, ApiOperation, ApiProduces, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { BodyLimit, MultipartFiles } from '../../common/http/json-body.guard.js';
import { refuseRoutes, type UnsupportedRoute } from '../../common/http/unsupported-routes.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { CreateOpenAiImageDto, EditOpenAiImageDto, OpenAiImagesResponseDto } from './dto/openai-image.dto.js';
import { IMAGE_INPUT_MAX_BYTES } from '../../modules/image/image-inputs.js';
import { type ImageParts, OpenAiImagesService } from './openai-images.service.js';

const ERRORS = { openAi: 'images' } as const;
const HELD_ERRORS = ['CONTENT_REFUSED', 'UPSTREAM_FAILED', 'TIMEOUT'] as const;
const GENERATE_EXAMPLES = {
  simple: { summary: 'A prompt (1024x1024 PNG, Base64)', value: { prompt: 'A lighthouse on a cliff at dusk, watercolour' } },
  transparent: { summary: 'Two transparent WebP stickers, 1536x1024', value: { prompt: 'A sticker of a red fox', n: 2, size: '1536x1024', background: 'transparent', output_format: 'webp' } },
  link: { summary: 'A link to the stored copy instead of Base64', value: { prompt: 'A bowl of ramen, studio photo', response_format: 'url' } },
};

/**
 * OpenAI's Images API (`/openai/v1/images`, so an OpenAI SDK's baseURL is `<gateway>/openai/v1`): a
 * generation or an edit is held open until its images are made (IMAGE_TIMEOUT_S, plus 15 s), or streamed.
 */
@ApiTags('image generation')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiExtraModels(CreateOpenAiImageDto, EditOpenAiImageDto)
@Controller('openai/v1/images')
export class OpenAiImagesController {
  constructor(private readonly images: OpenAiImagesService) {}

  @Post('generations')
  @HttpCode(200)
  @BodyLimit(256 * 1024)
  @ApiOperation({
    operationId: 'createOpenAiImage',
    summary: 'Create images (OpenAI images.generate)',
    description:
      'The request is held until the images are made (at most IMAGE_TIMEOUT_S + 15 s: then 504, and the task goes on: GET /tasks/{task_id}). `stream: true` answers server-sent events: partial images (partial_images), then one `image_generation.completed` per image. A field no configured model honours is refused (400) naming it.',
  })
  @ApiBody({ schema: { $ref: getSchemaPath(CreateOpenAiImageDto) }, examples: GENERATE_EXAMPLES })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiOkResponse({ type: OpenAiImagesResponseDto, description: 'The images, as OpenAI answers them.' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', ...HELD_ERRORS], ERRORS)
  generate(@CurrentPrincipal() principal: Principal, @Body() body: CreateOpenAiImageDto, @Res() res: Response, @RequestBaseUrl() base?: string): Promise<void> {
    return this.images.generate(principal, body, res, base);
  }

  @Post('edits')
  @HttpCode(200)
  @MultipartFiles([{ name: 'image', maxCount: 16 }, { name: 'image[]', maxCount: 16 }, { name: 'mask', maxCount: 1 }], IMAGE_INPUT_MAX_BYTES, 64 * 1024 * 1024)
  @ApiConsumes('multipart/form-data')
  @ApiOperation({
    operationId: 'editOpenAiImage',
    summary: 'Edit images (OpenAI images.edit)',
    description:
      'multipart/form-data as OpenAI\'s SDKs send it: `image` one file or several (`image[]`), PNG, JPEG or WebP, at most 16; `mask` a PNG of the first image\'s size, transparent where it is to change; the fields as text parts. The result has the first image\'s size unless `size` says otherwise. Held or streamed as a generation (`image_edit.*` events).',
  })
  @ApiBody({ schema: { allOf: [{ $ref: getSchemaPath(EditOpenAiImageDto) }, { type: 'object', required: ['image'], properties: { image: { type: 'array', items: { type: 'string', format: 'binary' } }, mask: { type: 'string', format: 'binary' } } }] } })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiOkResponse({ type: OpenAiImagesResponseDto, description: 'The images, as OpenAI answers them.' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', 'PAYLOAD_TOO_LARGE', ...HELD_ERRORS], ERRORS)
  edit(@CurrentPrincipal() principal: Principal, @Body() body: EditOpenAiImageDto, @UploadedFiles() parts: ImageParts | undefined, @Res() res: Response, @RequestBaseUrl() base?: string): Promise<void> {
    return this.images.edit(principal, body, parts, res, base);
  }
}

/** OpenAI's image operations this gateway does not offer, by route. */
export const OPENAI_IMAGES_UNSUPPORTED: UnsupportedRoute[] = [{ method: 'POST', path: 'variations', operation: 'images.createVariation' }];

/** They answer 404 not_supported in OpenAI's error shape. */
@ApiExcludeController()
@Controller('openai/v1/images')
export class OpenAiImagesUnsupportedController {}

refuseRoutes(OpenAiImagesUnsupportedController, OPENAI_IMAGES_UNSUPPORTED, (route) => `${route.operation} is not supported by this gateway (it was dall-e-2's, which OpenAI has shut down): its Images door offers images.generate and images.edit`);
