import { Controller, Get, Header, Param, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/decorators/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_FILES } from '../../common/swagger/samples.js';
import { SamplesService } from './samples.service.js';

@ApiTags('samples')
@Public()
@Controller('samples')
export class SamplesController {
  constructor(private readonly samples: SamplesService) {}

  @Get(':name')
  @Header('Cache-Control', 'public, max-age=86400')
  @ApiOperation({ operationId: 'getSampleFile', summary: 'A sample file to try the API with', description: 'keyframe.jpg (1280x720), photo.png (640x480) and clip.wav (2 s). A task that names one under this service\'s own address reads it without a network fetch.' })
  @ApiParam({ name: 'name', enum: SAMPLE_FILES })
  @ApiProduces('image/jpeg', 'image/png', 'audio/wav')
  @ApiOkResponse({ description: 'The file.', schema: { type: 'string', format: 'binary' } })
  @ApiErrors(['NOT_FOUND', 'INVALID_PARAMETER'])
  get(@Param('name') name: string): StreamableFile {
    const file = this.samples.file(name);
    if (!file) throw new AppError('NOT_FOUND', `No sample file ${name}; there are ${SAMPLE_FILES.join(', ')}`);
    return new StreamableFile(file.bytes, { type: file.contentType, length: file.bytes.length, disposition: `inline; filename="${file.name}"` });
  }
}
