import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../../common/decorators/auth.decorators.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { sendMedia } from './media-response.js';
import { MediaService } from './media.service.js';

@ApiTags('media')
@Public()
@Controller('media')
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Get(':id')
  @ApiOperation({
    operationId: 'getMedia',
    summary: 'Download a stored file',
    description:
      'The links in task results are signed and expire (RESULT_URL_TTL_S); they need no API key. Served as a CDN would: `Range` (206), `ETag` with `If-None-Match` (304), `Cache-Control` for the rest of the link\'s life, and a file name in `Content-Disposition`. With MEDIA_DELIVERY=redirect the answer is a 302 to a short-lived URL of the bucket.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiQuery({ name: 'expires', type: 'integer', description: 'Unix seconds after which the link stops working.' })
  @ApiQuery({ name: 'signature', description: 'HMAC of the id and expiry.' })
  @ApiHeader({ name: 'Range', required: false, description: 'One `bytes=` range, e.g. `bytes=0-1023`.' })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag of the copy the client has.' })
  @ApiProduces('image/png', 'image/jpeg', 'video/mp4', 'audio/mpeg')
  @ApiOkResponse({ description: 'The file.', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 206, description: 'The requested range of the file (Content-Range).', schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 302, description: 'MEDIA_DELIVERY=redirect: the file is at Location, a presigned URL of the bucket.' })
  @ApiResponse({ status: 304, description: 'The copy named in If-None-Match is current.' })
  @ApiErrors(['FORBIDDEN', 'NOT_FOUND', 'RANGE_NOT_SATISFIABLE'])
  async download(
    @Param('id') id: string,
    @Res() res: Response,
    @Query('expires') expires?: string,
    @Query('signature') signature?: string,
    @Headers('range') range?: string,
    @Headers('if-range') ifRange?: string,
    @Headers('if-none-match') ifNoneMatch?: string,
  ): Promise<void> {
    sendMedia(res, await this.media.answer(id, expires, signature, { range, ifRange, ifNoneMatch }));
  }
}
