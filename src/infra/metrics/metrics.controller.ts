import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/decorators/auth.decorators.js';
import { MetricsService } from './metrics.service.js';

@ApiTags('health')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4')
  @ApiOperation({ summary: 'Prometheus metrics', description: 'Process metrics and callback delivery counters (mgw_callback_*).' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string', example: 'mgw_callback_deliveries_failed_total{reason="gave_up"} 0' } })
  read(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
