import { Controller, Get, Param, Query, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/decorators/auth.decorators.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { MediaService } from './media.service.js';

@ApiTags('media')
@Public()
@Controller('media')
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Get(':id')
  @ApiOperation({ operationId: 'getMedia', summary: 'Download a result file', description: 'The links in task results are signed and expire (RESULT_URL_TTL_S); they need no API key.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiQuery({ name: 'expires', type: 'integer', description: 'Unix seconds after which the link stops working.' })
  @ApiQuery({ name: 'signature', description: 'HMAC of the id and expiry.' })
  @ApiProduces('image/png', 'image/jpeg', 'video/mp4')
  @ApiOkResponse({ description: 'The file.', schema: { type: 'string', format: 'binary' } })
  @ApiErrors(['FORBIDDEN', 'NOT_FOUND'])
  download(@Param('id') id: string, @Query('expires') expires?: string, @Query('signature') signature?: string): Promise<StreamableFile> {
    return this.media.download(id, expires, signature);
  }
}
