import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/decorators/auth.decorators.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';

@ApiTags('health')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4')
  @ApiOperation({ operationId: 'getMetrics', summary: 'Prometheus metrics', description: 'Process metrics and callback delivery counters (mgw_callback_*).' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string', example: 'mgw_callback_deliveries_failed_total{reason="gave_up"} 0' } })
  @ApiErrors(['INVALID_REQUEST'])
  read(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
